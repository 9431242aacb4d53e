package io.queueenterprise.remote;

import io.queueenterprise.crypto.KeyRing;
import io.queueenterprise.crypto.MasterKey;
import io.queueenterprise.protocol.client.ClientCredential;
import io.queueenterprise.queue.EnterpriseQueue;
import io.queueenterprise.queue.QueueAppender;
import io.queueenterprise.queue.QueueDescriptor;
import org.agrona.concurrent.NoOpIdleStrategy;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.io.TempDir;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.SecureRandom;
import java.util.HexFormat;

/** A client credential, a key ring, the descriptor a key holder left, and {@link FakeNodes} A (leading) and B. */
abstract class FakeNodesFixture {
    static final String QUEUE = "orders";
    static final String A = "127.0.0.1:41001";
    static final String B = "127.0.0.1:41002";

    @TempDir
    Path tmp;

    KeyRing ring;
    Path credentialFile;
    ClientCredential nodeCredential;
    FakeNodes nodes;
    FakeNodes.Node a;
    FakeNodes.Node b;

    @BeforeEach
    void cluster() throws Exception {
        SecureRandom random = new SecureRandom();
        byte[] material = new byte[32];
        random.nextBytes(material);
        ring = KeyRing.single(MasterKey.of(1, material));
        byte[] secret = new byte[32];
        random.nextBytes(secret);
        credentialFile = tmp.resolve("client-credential");
        Files.writeString(credentialFile, HexFormat.of().formatHex(secret));
        nodeCredential = ClientCredential.load(credentialFile);
        nodes = new FakeNodes(nodeCredential, QUEUE, descriptorRecording(ring));
        nodes.nextIndex = 1000;
        a = nodes.node("127.0.0.1", 41001);
        a.leads = true;
        b = nodes.node("127.0.0.1", 41002);
        b.leaderHost = "127.0.0.1";
        b.leaderPort = 41001;
    }

    @AfterEach
    void closeCredential() {
        nodeCredential.close();
    }

    /** The descriptor a key holder's first local write leaves (it records the ring's key), as a node would send it. */
    private byte[] descriptorRecording(KeyRing keys) throws Exception {
        Path dir = tmp.resolve("queue");
        try (EnterpriseQueue queue = EnterpriseQueue.builder(dir).name(QUEUE).encrypted(keys).build();
             QueueAppender appender = queue.createAppender()) {
            appender.write("created locally".getBytes(StandardCharsets.UTF_8));
        }
        return Files.readAllBytes(dir.resolve(QueueDescriptor.FILE_NAME));
    }

    RemoteQueue connect() {
        return connect(RemoteQueue.DEFAULT_WINDOW_COUNT, RemoteQueue.DEFAULT_WINDOW_BYTES);
    }

    RemoteQueue connect(int windowCount, int windowBytes) {
        return RemoteQueue.builder(A, B).queue(QUEUE).clientCredential(credentialFile).keyRing(ring).window(windowCount, windowBytes)
                .transport(nodes).clock(nodes.clock).idleStrategy(NoOpIdleStrategy.INSTANCE).build();
    }

    static byte[] bytes(String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }

}
