package io.queueenterprise.queue;

import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/**
 * The module access Chronicle Queue needs on Java 17+, checked before the first Chronicle class is
 * initialised: without it Chronicle fails deep inside with an {@code AssertionError} (or maps files
 * read-only after logging a warning). Missing access is reported as one sentence naming the flags.
 *
 * <p>The two below are the flags without which a queue cannot be opened, written and read (found by
 * removing each flag of {@code bin/jvm.args} in turn, on Java 17 and 25). Without the others Chronicle
 * works, or warns and falls back; docs/using-the-library.md says which is which.
 */
final class RequiredJvmFlags {
    /** A package of module {@code java.base} that Chronicle's classes must be able to reach. */
    private record Access(String packageName, boolean deepReflection, String why) {
        String flag(String target) {
            return (deepReflection ? "--add-opens=" : "--add-exports=") + "java.base/" + packageName + "=" + target
                    + " (" + why + ")";
        }
    }

    private static final List<Access> REQUIRED = List.of(
            new Access("java.lang.reflect", true, "Chronicle's access to JDK internals"),
            new Access("sun.nio.ch", false, "memory-mapping the cycle files"));

    /** A Chronicle class, loaded without running its static initialiser (which is what fails). */
    private static final String CHRONICLE_CLASS = "net.openhft.chronicle.core.Jvm";

    private static volatile boolean satisfied;

    private RequiredJvmFlags() {
    }

    /** @throws QueueConfigurationException naming every missing flag, before Chronicle is touched */
    static void check(String queueName) {
        if (satisfied) {
            return;
        }
        List<String> missing = missingFlags();
        if (!missing.isEmpty()) {
            throw new QueueConfigurationException(queueName, QueueConfigurationException.Problem.MISSING_JVM_FLAG,
                    "Chronicle Queue needs the JVM flag" + (missing.size() > 1 ? "s " : " ") + String.join(" and ", missing)
                    + " (the full list is bin/jvm.args; see docs/using-the-library.md)");
        }
        satisfied = true;
    }

    /** The flags this JVM lacks, in the form the {@code java} launcher takes; empty when none. */
    static List<String> missingFlags() {
        Module chronicle = chronicleModule();
        String target = chronicle.isNamed() ? chronicle.getName() : "ALL-UNNAMED";
        Optional<Module> javaBase = ModuleLayer.boot().findModule("java.base");
        List<String> missing = new ArrayList<>();
        for (Access access : REQUIRED) {
            // isExported is also true for an opened package, so either flag satisfies an export.
            boolean granted = javaBase.isEmpty() || (access.deepReflection()
                    ? javaBase.get().isOpen(access.packageName(), chronicle)
                    : javaBase.get().isExported(access.packageName(), chronicle));
            if (!granted) {
                missing.add(access.flag(target));
            }
        }
        return missing;
    }

    private static Module chronicleModule() {
        try {
            return Class.forName(CHRONICLE_CLASS, false, RequiredJvmFlags.class.getClassLoader()).getModule();
        } catch (ClassNotFoundException e) {
            return RequiredJvmFlags.class.getModule(); // Chronicle is a dependency; this is for odd class loaders
        }
    }
}
