import io.queueenterprise.crypto.HmacSha256;

import java.security.MessageDigest;

/**
 * What one HMAC-SHA256 costs here against one SHA-256 of the same bytes (the README's "about 45 ns per block"):
 *   ./mvnw -q -o -pl crypto -am package -DskipTests
 *   java -cp crypto/target/classes docs/perf-data/2026-12-07-append-batch/HmacCost.java 150
 * Prints eight rounds of 2,000,000 each; read the last ones (after the JIT).
 */
public class HmacCost {
    public static void main(String[] args) throws Exception {
        byte[] message = new byte[Integer.parseInt(args.length > 0 ? args[0] : "150")];
        byte[] out = new byte[32];
        HmacSha256 hmac = new HmacSha256(new byte[32]);
        MessageDigest sha256 = MessageDigest.getInstance("SHA-256");
        int n = 2_000_000;
        for (int round = 0; round < 8; round++) {
            long t0 = System.nanoTime();
            for (int i = 0; i < n; i++) {
                message[0] = (byte) i;
                hmac.start();
                hmac.update(message, 0, message.length);
                hmac.finish(out, 0);
            }
            long t1 = System.nanoTime();
            for (int i = 0; i < n; i++) {
                message[0] = (byte) i;
                sha256.update(message, 0, message.length);
                sha256.digest(out, 0, 32);
            }
            long t2 = System.nanoTime();
            System.out.printf("HMAC-SHA256 of %d B: %.0f ns; SHA-256 of it: %.0f ns%n", message.length,
                    (t1 - t0) / (double) n, (t2 - t1) / (double) n);
        }
    }
}
