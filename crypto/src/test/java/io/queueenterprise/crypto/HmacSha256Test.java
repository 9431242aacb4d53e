package io.queueenterprise.crypto;

import org.junit.jupiter.api.Test;

import javax.crypto.Mac;
import javax.crypto.spec.SecretKeySpec;
import java.util.HexFormat;
import java.util.SplittableRandom;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;

@org.junit.jupiter.api.Tag("unit")
class HmacSha256Test {
    @Test
    void matchesTheJdksMacForRfc4231AndRandomKeysAndMessages() throws Exception {
        // RFC 4231 test case 2
        HmacSha256 rfc = new HmacSha256("Jefe".getBytes(java.nio.charset.StandardCharsets.US_ASCII));
        byte[] message = "what do ya want for nothing?".getBytes(java.nio.charset.StandardCharsets.US_ASCII);
        byte[] out = new byte[32];
        rfc.start();
        rfc.update(message, 0, message.length);
        rfc.finish(out, 0);
        assertArrayEquals(HexFormat.of().parseHex("5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843"), out);

        SplittableRandom random = new SplittableRandom(42);
        for (int i = 0; i < 2_000; i++) {
            byte[] key = new byte[1 + random.nextInt(100)]; // shorter and longer than the 64-byte block
            byte[] data = new byte[random.nextInt(3000)];
            random.nextBytes(key);
            random.nextBytes(data);
            Mac jdk = Mac.getInstance("HmacSHA256");
            jdk.init(new SecretKeySpec(key, "HmacSHA256"));
            HmacSha256 ours = new HmacSha256(key);
            ours.start();
            int split = data.length == 0 ? 0 : random.nextInt(data.length);
            ours.update(data, 0, split);
            ours.update(data, split, data.length - split);
            ours.finish(out, 0);
            assertArrayEquals(jdk.doFinal(data), out, "key " + key.length + " bytes, message " + data.length + " bytes");
        }
    }
}
