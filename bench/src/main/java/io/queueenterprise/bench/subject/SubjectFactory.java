package io.queueenterprise.bench.subject;

/**
 * Opens a {@link Subject}. Adding a subject to the instrument = one class implementing this (and
 * {@link Subject}) + one line in {@link SubjectRegistry}; the harness needs no change.
 */
public interface SubjectFactory {

    /** Stable name used on the command line, in JSON and in charts, e.g. {@code chronicle-raw}. */
    String name();

    /** One line for humans. */
    String description();

    /** The subject's role, used to compute the headline ratios. */
    Role role();

    /** Whether the subject writes to the queue directory (its files go to disk or /dev/shm). */
    boolean persists();

    /** Opens the subject for one run. */
    Subject open(SubjectConfig config) throws Exception;

    /** Roles for the ratios: library plain / baseline, encrypted / library plain. */
    enum Role {
        /** Raw open-source Chronicle Queue: the baseline. */
        BASELINE,
        /** The library without encryption. */
        PLAIN,
        /** The library with encryption (one subject per crypto mode). */
        ENCRYPTED,
        /** Context only: an in-process peer that persists nothing. */
        PEER,
        /** The library replicated to a follower node: compared with the local encrypted library and the Aeron reference. */
        REPLICATED
    }
}
