package io.queueenterprise.operator.it;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;

/** Values the test bed's {@code node.sh env} prints (BIN_DIR, POD_RESOURCES_SOCKET, ...). */
final class TestbedEnvironment {
    private TestbedEnvironment() {
    }

    static String value(String key) throws IOException, InterruptedException {
        Process env = new ProcessBuilder("bash", Path.of(System.getProperty("qe.kubernetes.dir", "kubernetes"), "node.sh").toString(), "env")
            .redirectError(ProcessBuilder.Redirect.DISCARD).start();
        String output = new String(env.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        if (!env.waitFor(1, TimeUnit.MINUTES)) {
            env.destroyForcibly();
            throw new IllegalStateException("node.sh env did not finish");
        }
        for (String line : output.split("\n")) {
            if (line.startsWith(key + "=")) {
                return line.substring(key.length() + 1).trim();
            }
        }
        throw new IllegalStateException("node.sh env printed no " + key + ": " + output);
    }
}
