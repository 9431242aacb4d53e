package io.queueenterprise.cli;

import io.queueenterprise.crypto.KeyRing;
import io.queueenterprise.crypto.KeyRingSource;
import io.queueenterprise.crypto.WriteKeys;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

import java.io.IOException;
import java.io.PrintWriter;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.HexFormat;
import java.util.List;
import java.util.concurrent.Callable;

/**
 * {@code qe write-keys --keys KEY_DIR --queue NAME... --out DIR}: derives, from each master key in a key directory,
 * each queue's write-authorisation key (HKDF, one way: no data key follows from it) and writes them as
 * {@code DIR/<queue>.<key id>.key} (hex, owner-only), the layout a node's {@code writeKeyDirectory} reads.
 * docs/remote-clients.md, "Who may write". Exit code 0 done, 1 keys unreadable or a file exists, 2 bad usage.
 */
@Command(name = "write-keys", mixinStandardHelpOptions = true,
        description = "Derive the write-authorisation keys a node checks remote writers against (one per queue and"
                + " master key; derived one way, no data key) into DIR/<queue>.<key id>.key, for the node"
                + " configuration's writeKeyDirectory. Exit code: 0 written, 1 keys unreadable or a file already exists,"
                + " 2 bad usage.")
final class WriteKeysCommand implements Callable<Integer> {

    @CommandLine.Spec
    CommandLine.Model.CommandSpec spec;

    @Option(names = "--keys", required = true, paramLabel = "KEY_DIR",
            description = "the queues' key directory (files <id>.key and active, as a mounted Secret)")
    Path keys;

    @Option(names = "--queue", required = true, paramLabel = "NAME", description = "a queue name (repeatable)")
    List<String> queues;

    @Option(names = "--out", required = true, paramLabel = "DIR", description = "where the write keys go (created, owner-only)")
    Path out;

    @Override
    public Integer call() {
        PrintWriter stdout = spec.commandLine().getOut();
        PrintWriter stderr = spec.commandLine().getErr();
        // the name becomes a file name (and a Secret key)
        OwnerOnlyFiles.requireSafeNames(spec.commandLine(), "--queue", "a queue name", queues);
        KeyRing ring;
        try {
            ring = KeyRingSource.read(keys);
        } catch (io.queueenterprise.crypto.QueueCryptoException | java.io.UncheckedIOException e) {
            stderr.println("qe write-keys: key directory " + keys + ": " + e.getMessage());
            return 1;
        }
        try {
            OwnerOnlyFiles.createDirectories(out);
            for (String queue : queues) {
                for (int id : ring.keyIds()) {
                    Path file = out.resolve(queue + "." + id + ".key");
                    byte[] key = WriteKeys.derive(ring.key(id), queue);
                    try {
                        OwnerOnlyFiles.createNew(file, HexFormat.of().formatHex(key).getBytes(StandardCharsets.US_ASCII));
                    } finally {
                        Arrays.fill(key, (byte) 0);
                    }
                    stdout.println("wrote " + file);
                }
            }
        } catch (java.nio.file.FileAlreadyExistsException e) {
            stderr.println("qe write-keys: " + e.getFile() + " exists; not overwritten");
            return 1;
        } catch (IOException e) {
            stderr.println("qe write-keys: " + e);
            return 1;
        }
        return 0;
    }
}
