package io.queueenterprise.operator.helm;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import org.junit.jupiter.api.Test;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.dataformat.yaml.YAMLFactory;

/**
 * docs/operator.md against the CRD generated from operator.api (the one the chart ships): the printer columns in
 * the order {@code kubectl get qc} shows them, and every CEL rule's message in the validation table. The CRD is the
 * source of truth; the docs say what it holds.
 */
@org.junit.jupiter.api.Tag("unit")
@org.junit.jupiter.api.Timeout(60)
class CrdDocumentationTest {
    private static final Path CRD = Path.of(System.getProperty("qe.crd.file",
        "target/classes/META-INF/fabric8/queueclusters.queue-enterprise.io-v1.yml"));
    private static final Path DOCS = Path.of(System.getProperty("qe.docs.dir", "../docs")).resolve("operator.md");
    private static final Pattern TABLE_ROW = Pattern.compile("^\\| `?([^|`]+?)`? \\| `([^`]+)` \\|$");

    private static JsonNode crdVersion() throws IOException {
        return new ObjectMapper(new YAMLFactory()).readTree(CRD.toFile()).path("spec").path("versions").get(0);
    }

    /** The rows of the table that follows {@code heading} (a line of its own) in docs/operator.md. */
    private static List<String> tableAfter(String heading) throws IOException {
        List<String> lines = Files.readAllLines(DOCS);
        int at = lines.indexOf(heading);
        assertTrue(at >= 0, "docs/operator.md has no line '" + heading + "'");
        List<String> rows = new ArrayList<>();
        int i = at + 1;
        while (i < lines.size() && !lines.get(i).startsWith("|")) {
            i++;
        }
        for (i += 2; i < lines.size() && lines.get(i).startsWith("|"); i++) {   // past the header and |---|
            rows.add(lines.get(i));
        }
        return rows;
    }

    @Test
    void printerColumnsAreDocumentedInTheOrderKubectlShowsThem() throws IOException {
        List<String> generated = new ArrayList<>();
        crdVersion().path("additionalPrinterColumns").forEach(column ->
            generated.add(column.path("name").asText() + " " + column.path("jsonPath").asText()));
        List<String> documented = new ArrayList<>();
        for (String row : tableAfter("`kubectl get qc` shows, after NAME, these columns in this order:")) {
            Matcher cells = TABLE_ROW.matcher(row);
            assertTrue(cells.matches(), "not a '| column | `jsonPath` |' row: " + row);
            documented.add(cells.group(1) + " " + cells.group(2));
        }
        assertFalse(generated.isEmpty(), "no additionalPrinterColumns in " + CRD);
        assertEquals(generated, documented, "docs/operator.md's printer columns differ from the generated CRD's");
    }

    @Test
    void everyCelRuleOfTheSpecIsInTheValidationTable() throws IOException {
        List<String> messages = new ArrayList<>();
        collectRuleMessages(crdVersion().path("schema").path("openAPIV3Schema").path("properties").path("spec"), messages);
        List<String> documented = new ArrayList<>();
        for (String row : tableAfter("### Validation by the API server")) {
            String message = row.substring(row.lastIndexOf("| `") + 3, row.lastIndexOf("` |"));
            documented.add(message.endsWith(" ...") ? message.substring(0, message.length() - 4) : message);
        }
        assertFalse(messages.isEmpty(), "no x-kubernetes-validations in " + CRD);
        for (String message : messages) {
            assertTrue(documented.stream().anyMatch(message::startsWith),
                "docs/operator.md's validation table lacks the rule whose message is: " + message);
        }
    }

    private static void collectRuleMessages(JsonNode schema, List<String> messages) {
        if (schema.isMissingNode()) {
            return;
        }
        schema.path("x-kubernetes-validations").forEach(rule -> messages.add(rule.path("message").asText()));
        schema.path("properties").forEach(property -> collectRuleMessages(property, messages));
        collectRuleMessages(schema.path("items"), messages);
    }
}
