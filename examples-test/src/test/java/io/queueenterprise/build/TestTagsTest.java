package io.queueenterprise.build;

import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Every test class of every module carries at least one of the project's tags, and no other: the inner loop
 * ({@code -Dgroups=unit}) and CI's subsets select by tag, so an untagged class would silently drop out of the
 * inner loop, and a misspelt tag out of every subset. The tags and what each means: docs/testing.md.
 */
@Tag("unit")
class TestTagsTest {
    static final Set<String> TAGS = Set.of("unit", "integration", "process", "netns", "kubernetes", "slow");
    private static final Pattern TEST_METHOD = Pattern.compile("@(Test|ParameterizedTest|RepeatedTest|TestFactory|TestTemplate)\\b");
    private static final Pattern TAG = Pattern.compile("@(?:org\\.junit\\.jupiter\\.api\\.)?Tag\\(\"([^\"]*)\"\\)");

    @Test
    void everyTestClassCarriesAKnownTagAndNoUnknownOne() throws IOException {
        Path root = projectRoot();
        List<String> untagged = new ArrayList<>();
        Set<String> unknown = new TreeSet<>();
        int classes = 0;
        try (Stream<Path> modules = Files.list(root)) {
            for (Path testSources : modules.map(module -> module.resolve("src/test/java")).filter(Files::isDirectory).toList()) {
                for (Path file : javaFiles(testSources)) {
                    String source = Files.readString(file);
                    if (!TEST_METHOD.matcher(source).find()) {
                        continue;
                    }
                    classes++;
                    Set<String> tags = new TreeSet<>();
                    Matcher matcher = TAG.matcher(source);
                    while (matcher.find()) {
                        tags.add(matcher.group(1));
                    }
                    if (tags.stream().noneMatch(TAGS::contains)) {
                        untagged.add(root.relativize(file).toString());
                    }
                    tags.stream().filter(tag -> !TAGS.contains(tag)).forEach(tag -> unknown.add(tag + " in " + root.relativize(file)));
                }
            }
        }
        assertTrue(classes > 50, "found only " + classes + " test classes under " + root + ": is that the project's root?");
        assertEquals(List.of(), untagged, "test classes without any of the tags " + TAGS);
        assertEquals(Set.of(), unknown, "tags that no subset selects (known: " + TAGS + ")");
    }

    private static List<Path> javaFiles(Path directory) {
        try (Stream<Path> files = Files.walk(directory)) {
            return files.filter(file -> file.toString().endsWith(".java")).sorted().toList();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** The reactor's root: the folder above this module that holds the root pom and the Maven wrapper. */
    private static Path projectRoot() {
        String configured = System.getProperty("qe.project.root");
        Path root = configured != null ? Path.of(configured) : Path.of("").toAbsolutePath().getParent();
        assertTrue(Files.isRegularFile(root.resolve("mvnw")) && Files.isRegularFile(root.resolve("pom.xml")),
            "not the project's root (no mvnw and pom.xml): " + root);
        return root;
    }
}
