package io.queueenterprise.queue;

/** The queue's files could not be read as a Chronicle Queue (a damaged cycle file, say). */
public class CorruptedQueueException extends ExcerptException {
    private static final long serialVersionUID = 1L;

    public CorruptedQueueException(String queueName, long index, String message, Throwable cause) {
        super(queueName, index, message, cause);
    }

    /**
     * Damage found at {@code index} of {@code queue}: the message names the cycle file that holds it and what
     * Chronicle reported, in one sentence.
     */
    static CorruptedQueueException at(String queueName, net.openhft.chronicle.queue.ChronicleQueue queue, long index,
                                      String what, Throwable cause) {
        return new CorruptedQueueException(queueName, index, what + " in " + cycleFile(queue, index) + " ("
                + cause.getClass().getSimpleName() + (cause.getMessage() == null ? "" : ": " + cause.getMessage()) + ")",
                cause);
    }

    /** The cycle file holding {@code index}, by Chronicle's naming (the roll cycle's date format, UTC). */
    static String cycleFile(net.openhft.chronicle.queue.ChronicleQueue queue, long index) {
        if (index == UNKNOWN_INDEX || index < 0) {
            return "a cycle file of " + queue.fileAbsolutePath();
        }
        net.openhft.chronicle.queue.RollCycle roll = queue.rollCycle();
        int cycle = roll.toCycle(index);
        try {
            String name = java.time.format.DateTimeFormatter.ofPattern(roll.format()).withZone(java.time.ZoneOffset.UTC)
                    .format(java.time.Instant.ofEpochMilli((long) cycle * roll.lengthInMillis() + roll.defaultEpoch()));
            return java.nio.file.Path.of(queue.fileAbsolutePath(), name + ".cq4").toString();
        } catch (RuntimeException unusualFormat) {
            return "cycle " + cycle + " of " + queue.fileAbsolutePath();
        }
    }
}
