package io.queueenterprise.queue;

import java.nio.ByteBuffer;
import java.nio.file.Path;
import java.util.Random;
import java.util.zip.CRC32;

/**
 * Child process for {@link SigkillRecoveryTest}: appends self-checking excerpts to an encrypted
 * queue as fast as it can until it is killed. Excerpt: round (4), sequence (8), CRC32 of the
 * payload (8), payload (random length up to 64 KiB, so a kill often lands mid-copy).
 */
public final class CrashingWriter {
    static final int HEADER = 4 + 8 + 8;

    private CrashingWriter() {
    }

    public static void main(String[] args) {
        Path queueDir = Path.of(args[0]);
        Path keyDir = Path.of(args[1]);
        int round = Integer.parseInt(args[2]);
        Random random = new Random(round);
        byte[] buffer = new byte[HEADER + 65_536];
        CRC32 crc = new CRC32();
        try (EnterpriseQueue queue = EnterpriseQueue.builder(queueDir).encrypted(keyDir).build();
             QueueAppender appender = queue.createAppender()) {
            System.out.println("ready");
            System.out.flush();
            for (long sequence = 0; ; sequence++) {
                appender.write(buffer, 0, encode(buffer, round, sequence, random.nextInt(65_536), crc));
            }
        }
    }

    /** Writes one self-checking record (header, then a payload derived from the sequence) into {@code buffer}; returns its length. */
    static int encode(byte[] buffer, int round, long sequence, int payload, CRC32 crc) {
        for (int i = 0; i < payload; i++) {
            buffer[HEADER + i] = (byte) (sequence * 31 + i);
        }
        crc.reset();
        crc.update(buffer, HEADER, payload);
        ByteBuffer.wrap(buffer, 0, HEADER).putInt(round).putLong(sequence).putLong(crc.getValue());
        return HEADER + payload;
    }
}
