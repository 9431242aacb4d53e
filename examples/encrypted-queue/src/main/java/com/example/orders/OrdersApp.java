package com.example.orders;

import io.queueenterprise.queue.EnterpriseQueue;
import io.queueenterprise.queue.QueueAppender;
import io.queueenterprise.queue.QueueTailer;

import java.nio.charset.StandardCharsets;
import java.nio.file.Path;

/**
 * Writes orders to an encrypted queue and reads them back.
 *
 * <pre>
 *   java @jvm.args -cp ... com.example.orders.OrdersApp QUEUE_DIR KEY_DIR [COUNT]
 * </pre>
 * KEY_DIR holds {@code 1.key} (a 16- or 32-byte random key as 32 or 64 hex digits, owner-only) and {@code active} (the text
 * {@code 1}), the layout of a mounted Kubernetes Secret.
 */
public final class OrdersApp {
    private OrdersApp() {
    }

    public static void main(String[] args) {
        if (args.length < 2 || args.length > 3) {
            System.err.println("usage: OrdersApp QUEUE_DIR KEY_DIR [COUNT]");
            System.exit(2);
        }
        Path queueDir = Path.of(args[0]);
        Path keyDir = Path.of(args[1]);
        int count = args.length == 3 ? Integer.parseInt(args[2]) : 1000;

        try (EnterpriseQueue queue = EnterpriseQueue.builder(queueDir).encrypted(keyDir).build();
             QueueAppender appender = queue.createAppender();
             QueueTailer tailer = queue.createTailer()) {
            tailer.toEnd(); // this run's orders only, when the queue holds earlier ones
            for (int i = 0; i < count; i++) {
                appender.write(order(i).getBytes(StandardCharsets.UTF_8));
            }
            byte[] buffer = new byte[256];
            int read = 0;
            int length;
            while ((length = tailer.read(buffer)) >= 0) {
                String order = new String(buffer, 0, length, StandardCharsets.UTF_8);
                if (!order.equals(order(read))) {
                    throw new IllegalStateException("order " + read + " read back as " + order);
                }
                read++;
            }
            System.out.println("wrote " + count + " orders to " + (queue.encrypted() ? "encrypted" : "plain")
                    + " queue " + queue.name() + ", read " + read + " back");
        }
    }

    static String order(int i) {
        return "order-" + i + " BUY 100 EURUSD @ 1.0843";
    }
}
