package io.queueenterprise.bench.harness;

import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.util.List;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A subject JVM's stdout carries the JVM's own log as well as the worker's replies. CI once failed
 * the bench because a JFR line ("[54.510s][error][jfr] Thread method sampler crashed") was read as
 * the answer to RUN. Here a real worker JVM logs to stdout ({@code -Xlog:gc} writes "Using G1"
 * before main runs) and its HELLO must still be the reply read.
 */
@Tag("process")
@Timeout(120)
class ChildJvmTest {

    @Test
    void theJvmsOwnLogLinesOnStdoutAreNotTakenForReplies() throws Exception {
        try (ChildJvm worker = new ChildJvm("subject JVM (test)", ChildJvm.currentJava(), List.of("-Xlog:gc:stdout"),
                SubjectWorker.class, List.of(), SubjectWorker::isReply)) {
            String hello = worker.expect("HELLO", 60);
            assertTrue(hello.startsWith("{"), "HELLO carries the JVM's description as JSON: " + hello);
        }
    }

    @Test
    void onlyTheProtocolsWordsAreReplies() {
        assertTrue(SubjectWorker.isReply("OK"));
        assertTrue(SubjectWorker.isReply("RESULT {}"));
        assertTrue(SubjectWorker.isReply("ERROR java.io.IOException: x"));
        assertFalse(SubjectWorker.isReply("[54.510s][error][jfr] Thread method sampler crashed"));
        assertFalse(SubjectWorker.isReply("OKAY"));
    }
}
