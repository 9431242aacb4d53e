package io.queueenterprise.replication.wire;

/** Limits and checks of a term history as frames carry it: (term, last index before the term) pairs, oldest first. */
final class TermHistoryCodec {
    /** Terms a history may carry in a frame (one per failover: far more than a queue's life needs). */
    static final int MAX_TERMS = 4096;
    static final int ENTRY_LENGTH = 16;

    private TermHistoryCodec() {
    }

    /** Validates a history at the reader's position and returns where its entries start. */
    static int validate(BodyReader reader, int count, String field) throws MalformedFrameException {
        if (count > MAX_TERMS) {
            throw new MalformedFrameException(field, count + " terms is more than " + MAX_TERMS);
        }
        int start = reader.position();
        long previousTerm = 0;
        long previousLast = -1;
        for (int i = 0; i < count; i++) {
            long term = reader.i64(field + ".term");
            long prevLast = reader.i64(field + ".previousLastIndex");
            if (term <= previousTerm) {
                throw new MalformedFrameException(field + ".term", "terms must increase: " + term + " after " + previousTerm);
            }
            if (prevLast < previousLast) {
                throw new MalformedFrameException(field + ".previousLastIndex", "must not decrease: " + prevLast + " after " + previousLast);
            }
            previousTerm = term;
            previousLast = prevLast;
        }
        return start;
    }
}
