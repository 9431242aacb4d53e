package io.queueenterprise.replication.engine;

import org.agrona.DirectBuffer;

/**
 * Where a session offers its frames to one peer: that peer's Aeron publication in production
 * ({@code publication::offer}, bound once per publication by {@link PeerChannels}), a recording fake in the sessions'
 * unit tests. It answers as {@link io.aeron.Publication#offer(DirectBuffer, int, int)} does: the new position when
 * the frame was taken, else one of {@code Publication.BACK_PRESSURED}, {@code ADMIN_ACTION}, {@code NOT_CONNECTED},
 * {@code CLOSED} or {@code MAX_POSITION_EXCEEDED}. The bytes are copied during the call (nothing is kept), and
 * nothing is allocated.
 */
@FunctionalInterface
interface FrameSink {
    long offer(DirectBuffer buffer, int offset, int length);
}
