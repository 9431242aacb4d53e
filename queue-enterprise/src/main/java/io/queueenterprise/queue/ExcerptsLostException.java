package io.queueenterprise.queue;

/**
 * Excerpts the queue recorded as written are not in its cycle files any more: a cycle file truncated (its tail
 * is gone) or deleted from the middle of the queue. Names the range lost and where reading can go on; the lost
 * excerpts can only come back from a copy that holds them (a replica), otherwise {@link QueueTailer#skipDamaged()}
 * accepts the loss explicitly and reads on.
 */
public final class ExcerptsLostException extends CorruptedQueueException {
    private static final long serialVersionUID = 1L;
    private final long firstLost;
    private final long lastLost;
    private final long resumeIndex;
    private final String why;

    /**
     * @param firstLost   the first index lost
     * @param lastLost    the last index lost, or {@link #UNKNOWN_INDEX} when only its cycle is known
     * @param resumeIndex the first intact excerpt after the loss, or -1 when none follows (a lost tail)
     */
    ExcerptsLostException(String queueName, long firstLost, long lastLost, long resumeIndex, String why) {
        super(queueName, firstLost, "excerpts 0x" + Long.toHexString(firstLost) + " to "
                + (lastLost == UNKNOWN_INDEX ? "the end of that cycle" : "0x" + Long.toHexString(lastLost))
                + " are lost: " + why + "; recover them from a replica, or accept the loss: skipDamaged() reads on "
                + (resumeIndex < 0 ? "from whatever is written next" : "from 0x" + Long.toHexString(resumeIndex)), null);
        this.firstLost = firstLost;
        this.lastLost = lastLost;
        this.resumeIndex = resumeIndex;
        this.why = why;
    }

    /** What was found, in one clause, naming the file (the message adds the range and the way on). */
    public String why() {
        return why;
    }

    public long firstLost() {
        return firstLost;
    }

    /** The last index lost, or {@link #UNKNOWN_INDEX} when a whole cycle file is gone and only its cycle is known. */
    public long lastLost() {
        return lastLost;
    }

    /** The first intact excerpt after the loss, or -1 when nothing follows it (a lost tail). */
    public long resumeIndex() {
        return resumeIndex;
    }
}
