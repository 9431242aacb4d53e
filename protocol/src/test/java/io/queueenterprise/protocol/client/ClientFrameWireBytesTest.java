package io.queueenterprise.protocol.client;

import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.io.InputStream;
import java.util.HexFormat;
import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;

/**
 * The encoders write, byte for byte, what the wire format's first encoder wrote: the committed fuzz seeds are its
 * output for the same inputs, so a client and a node of different builds still understand each other.
 */
@Tag("unit")
class ClientFrameWireBytesTest {
    @Test
    void everyEncoderWritesTheCommittedBytesOfItsType() throws IOException {
        Map<ClientFrameType, byte[]> samples = ClientFrameSamples.byType();
        assertEquals(ClientFrameType.values().length, samples.size(), "one sample per frame type");
        for (Map.Entry<ClientFrameType, byte[]> sample : samples.entrySet()) {
            String seed = "ClientFrameFuzzTestInputs/decoderThrowsOnlyMalformedClientFrameException/"
                    + ClientFrameSamples.seedName(sample.getKey());
            try (InputStream in = ClientFrameWireBytesTest.class.getResourceAsStream(seed)) {
                assertNotNull(in, seed);
                assertEquals(HexFormat.of().formatHex(in.readAllBytes()), HexFormat.of().formatHex(sample.getValue()),
                        sample.getKey() + " bytes");
            }
        }
    }
}
