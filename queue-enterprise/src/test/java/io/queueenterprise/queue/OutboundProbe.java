package io.queueenterprise.queue;

import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * Child process for {@link NoOutboundCallsTest}: uses the library as an application does (a plain
 * and an encrypted queue opened, written, read, closed, reopened). With {@code --connect PORT} it
 * also connects to that loopback port: the control showing the monitor sees a connection.
 */
public final class OutboundProbe {
    private OutboundProbe() {
    }

    public static void main(String[] args) throws IOException {
        Path dir = Path.of(args[0]);
        if (args.length == 3 && args[1].equals("--connect")) {
            try (Socket socket = new Socket()) {
                socket.connect(new InetSocketAddress(InetAddress.getLoopbackAddress(), Integer.parseInt(args[2])), 5_000);
            }
        }
        Path keys = Files.createDirectories(dir.resolve("keys"));
        Files.write(keys.resolve("1.key"), TestKeys.hex(TestKeys.randomMaterial()));
        Files.writeString(keys.resolve("active"), "1");
        for (int open = 0; open < 2; open++) {
            exercise(EnterpriseQueue.builder(dir.resolve("plain")));
            exercise(EnterpriseQueue.builder(dir.resolve("encrypted")).encrypted(keys));
        }
        System.out.println("probe: done");
    }

    private static void exercise(EnterpriseQueue.Builder builder) {
        byte[] message = "outbound probe".getBytes(StandardCharsets.UTF_8);
        byte[] buffer = new byte[64];
        try (EnterpriseQueue queue = builder.build();
             QueueAppender appender = queue.createAppender();
             QueueTailer tailer = queue.createTailer()) {
            for (int i = 0; i < 1_000; i++) {
                appender.write(message);
            }
            while (tailer.read(buffer) >= 0) {
                // read everything back
            }
        }
    }
}
