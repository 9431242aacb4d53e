package io.queueenterprise.cli;

import io.queueenterprise.crypto.IdentityKey;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

import java.io.IOException;
import java.io.PrintWriter;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.SecureRandom;
import java.util.List;
import java.util.concurrent.Callable;

/**
 * {@code qe identity --name NAME... --out DIR}: makes one Ed25519 identity per name, for clusters run without the
 * operator: the private key (seed, hex, owner-only) in {@code DIR/<name>.key}, never printed, and the public key in
 * {@code DIR/<name>.pub} and on standard output as {@code <name> <public key>}. For a node: its key file is that node's
 * {@code identityKeyFile}, the public key what every node configuration pins as its {@code peers[].identityKey}
 * (docs/replication.md, "Per-node identity"). For a remote client: its key file goes to that client alone
 * ({@code RemoteQueue.Builder.identity}), the printed line into the nodes' {@code authorisedClientsFile}
 * (docs/remote-clients.md, "Per-client identity"). Exit code 0 done, 1 a file exists, 2 bad usage.
 */
@Command(name = "identity", mixinStandardHelpOptions = true,
        description = "Make an Ed25519 identity per name (a node or a remote client): DIR/<name>.key (private, owner-only;"
                + " a node's identityKeyFile, or a client's identity key) and DIR/<name>.pub, the public key also printed as"
                + " '<name> <key>' (a node's peers[].identityKey; a line of the nodes' authorisedClientsFile)."
                + " Exit code: 0 written, 1 a file already exists, 2 bad usage.")
final class IdentityCommand implements Callable<Integer> {

    @CommandLine.Spec
    CommandLine.Model.CommandSpec spec;

    @Option(names = "--name", required = true, paramLabel = "NAME", description = "a node id or client name (repeatable)")
    List<String> names;

    @Option(names = "--out", required = true, paramLabel = "DIR", description = "where the keys go (created, owner-only)")
    Path out;

    @Override
    public Integer call() {
        PrintWriter stdout = spec.commandLine().getOut();
        PrintWriter stderr = spec.commandLine().getErr();
        OwnerOnlyFiles.requireSafeNames(spec.commandLine(), "--name", "a node id or client name", names);
        if (names.stream().distinct().count() != names.size()) {
            throw new CommandLine.ParameterException(spec.commandLine(), "--name: a name is given twice");
        }
        SecureRandom random = new SecureRandom();
        try {
            OwnerOnlyFiles.createDirectories(out);
            for (String name : names) {
                Path keyFile = out.resolve(name + ".key");
                Path publicFile = out.resolve(name + ".pub");
                if (Files.exists(keyFile) || Files.exists(publicFile)) {
                    stderr.println("qe identity: " + (Files.exists(keyFile) ? keyFile : publicFile) + " exists; not overwritten");
                    return 1;
                }
                try (IdentityKey identity = IdentityKey.generate(random)) {
                    OwnerOnlyFiles.createNew(keyFile, identity.seedHex().getBytes(StandardCharsets.US_ASCII));
                    Files.writeString(publicFile, identity.publicKeyText() + "\n");
                    stdout.println(name + " " + identity.publicKeyText());
                }
            }
        } catch (IOException e) {
            stderr.println("qe identity: " + e);
            return 1;
        }
        return 0;
    }
}
