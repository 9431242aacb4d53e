package io.queueenterprise.replication.config;

import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.JsonNodeType;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.fasterxml.jackson.dataformat.yaml.YAMLFactory;
import io.queueenterprise.replication.AckMode;
import io.queueenterprise.replication.config.NodeConfig.Admin;
import io.queueenterprise.replication.config.NodeConfig.Encryption;
import io.queueenterprise.replication.config.NodeConfig.IdleStrategySpec;
import io.queueenterprise.replication.engine.EngineSettings;
import io.queueenterprise.replication.config.NodeConfig.Metrics;
import io.queueenterprise.replication.config.NodeConfig.Peer;
import io.queueenterprise.replication.config.NodeConfig.QueueSpec;
import io.queueenterprise.replication.config.NodeConfig.Retention;
import net.openhft.chronicle.queue.RollCycles;
import net.openhft.chronicle.queue.rollcycles.TestRollCycles;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.AccessDeniedException;
import java.nio.file.Files;
import java.nio.file.InvalidPathException;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.Iterator;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.function.Function;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;

/**
 * Reads a node-configuration document (YAML, schema version {@value NodeConfig#SCHEMA_VERSION}) into a validated
 * {@link NodeConfig}. Every refusal is a {@link NodeConfigException} naming the field's path and the value found;
 * unknown fields are refused (a misspelt optional field must not silently fall back to its default). Relative
 * paths are resolved against the directory of the document. Field reference: docs/node-config.md.
 */
public final class NodeConfigReader {
    /** Defaults of the optional fields (docs/node-config.md). */
    public static final AckMode DEFAULT_ACK_MODE = AckMode.ASYNC;
    public static final Duration DEFAULT_ACK_TIMEOUT = Duration.ofSeconds(1);
    public static final String DEFAULT_BIND_ADDRESS = "0.0.0.0";
    public static final IdleStrategySpec DEFAULT_IDLE_STRATEGY = IdleStrategySpec.BACKOFF;

    /** Safe as a directory name and as a Prometheus label value: no separator, no "." or "..", no space. */
    private static final Pattern NAME = Pattern.compile("[A-Za-z0-9][A-Za-z0-9._-]{0,62}");
    /** What {@link #isSafeName} allows, in words, for messages that refuse a name. */
    public static final String SAFE_NAME_RULE = "1 to 63 letters, digits, '.', '_' or '-', starting with a letter or digit";

    /**
     * Whether {@code name} is a safe node or queue name: it becomes a folder or file name (queue folders, write-key
     * files, Kubernetes Secret keys), so no separators, no leading dot, nothing a shell or a path could misread.
     */
    public static boolean isSafeName(String name) {
        return name != null && NAME.matcher(name).matches();
    }
    private static final Pattern DURATION = Pattern.compile("([0-9]{1,12})(ms|s|m|h|d)");
    private static final Pattern SIZE = Pattern.compile("([0-9]{1,19})(Ki|Mi|Gi|Ti)?");
    private static final Map<String, Long> SIZE_UNITS = Map.of("Ki", 1L << 10, "Mi", 1L << 20, "Gi", 1L << 30, "Ti", 1L << 40);

    private static final ObjectMapper YAML = new ObjectMapper(new YAMLFactory())
            .enable(JsonParser.Feature.STRICT_DUPLICATE_DETECTION);

    private NodeConfigReader() {
    }

    /** Reads and validates the document in {@code file}; relative paths in it are resolved against its directory. */
    public static NodeConfig read(Path file) {
        String text;
        try {
            text = Files.readString(file, StandardCharsets.UTF_8);
        } catch (IOException e) {
            String reason = e instanceof NoSuchFileException ? "no such file"
                    : e instanceof AccessDeniedException ? "permission denied" : String.valueOf(e.getMessage());
            throw new NodeConfigException("", "cannot read " + file + ": " + reason, e);
        }
        Path base = file.toAbsolutePath().getParent();
        return parse(text, base);
    }

    /** Validates the document {@code yaml}; relative paths in it are resolved against {@code baseDirectory}. */
    public static NodeConfig parse(String yaml, Path baseDirectory) {
        JsonNode root;
        try {
            root = YAML.readTree(yaml);
        } catch (JsonProcessingException e) {
            String where = e.getLocation() == null ? ""
                    : " at line " + e.getLocation().getLineNr() + ", column " + e.getLocation().getColumnNr();
            // SnakeYAML's message quotes the document over several lines: keep its sentences, on one line.
            String problem = e.getOriginalMessage().lines().filter(l -> !l.isEmpty() && !Character.isWhitespace(l.charAt(0)))
                    .collect(Collectors.joining("; "));
            throw new NodeConfigException("", "not a valid YAML document" + where + ": " + problem, e);
        }
        if (root == null || root.isMissingNode() || root.isNull()) {
            throw new NodeConfigException("", "the document is empty");
        }
        return new NodeConfigReader.Document(baseDirectory).read(new Fields("", root));
    }

    /** One read of one document: knows where relative paths start. */
    private record Document(Path base) {

        NodeConfig read(Fields doc) {
            // The version first: a document of another schema is refused as such, not field by field.
            int version = doc.requiredInt("version", 1, Integer.MAX_VALUE);
            if (version != NodeConfig.SCHEMA_VERSION) {
                throw new NodeConfigException("version", version + " is not supported; this node reads schema version "
                        + NodeConfig.SCHEMA_VERSION);
            }
            String nodeId = doc.requiredName("nodeId");
            Path dataDirectory = doc.requiredPath("dataDirectory", base);
            List<Peer> peers = doc.requiredList("peers", this::peer);
            Path peerCredentialFile = doc.requiredPath("peerCredentialFile", base);
            Path identityKeyFile = doc.optionalText("identityKeyFile").isPresent() ? doc.requiredPath("identityKeyFile", base) : null;
            List<QueueSpec> queues = doc.requiredList("queues", this::queue);
            Fields adminFields = doc.requiredObject("admin");
            Admin admin = new Admin(adminFields.optionalText("bindAddress").orElse(DEFAULT_BIND_ADDRESS),
                    adminFields.requiredInt("port", 1, 65535), adminFields.requiredPath("credentialFile", base));
            adminFields.refuseUnknown();
            Fields metricsFields = doc.requiredObject("metrics");
            Metrics metrics = new Metrics(metricsFields.optionalText("bindAddress").orElse(DEFAULT_BIND_ADDRESS),
                    metricsFields.requiredInt("port", 1, 65535));
            metricsFields.refuseUnknown();
            IdleStrategySpec idle = doc.optionalEnum("idleStrategy", IdleStrategySpec.class).orElse(DEFAULT_IDLE_STRATEGY);
            Path clientCredentialFile = doc.optionalText("clientCredentialFile").isPresent()
                    ? doc.requiredPath("clientCredentialFile", base) : null;
            Path writeKeyDirectory = doc.optionalText("writeKeyDirectory").isPresent()
                    ? doc.requiredPath("writeKeyDirectory", base) : null;
            Duration leaseTimeout = doc.optionalDuration("leaseTimeout").orElse(EngineSettings.DEFAULT_LEASE_TIMEOUT);
            if (leaseTimeout.compareTo(Duration.ofMillis(100)) < 0 || leaseTimeout.compareTo(Duration.ofMinutes(1)) > 0) {
                // a lease below the leader's heartbeat interval (100 ms) lapses between two heartbeats
                throw new NodeConfigException("leaseTimeout", leaseTimeout + " is not 100ms .. 1m");
            }
            Path authorisedClientsFile = doc.optionalText("authorisedClientsFile").isPresent()
                    ? doc.requiredPath("authorisedClientsFile", base) : null;
            boolean drawIdentityKeyIfAbsent = doc.optionalBoolean("drawIdentityKeyIfAbsent").orElse(false);
            Path peerIdentitiesFile = doc.optionalText("peerIdentitiesFile").isPresent()
                    ? doc.requiredPath("peerIdentitiesFile", base) : null;
            doc.refuseUnknown();
            if (drawIdentityKeyIfAbsent && identityKeyFile == null) {
                throw new NodeConfigException("drawIdentityKeyIfAbsent", "true, but identityKeyFile is missing: the key"
                        + " is drawn into that file, so that it is the same key at the next start");
            }

            unique(peers, Peer::id, "peers", "id");
            unique(peers, p -> p.host() + ":" + p.replicationPort(), "peers", "replicationPort");
            unique(queues, QueueSpec::name, "queues", "name");
            Peer self = peers.stream().filter(p -> p.id().equals(nodeId)).findFirst().orElseThrow(() ->
                    new NodeConfigException("nodeId", quote(nodeId) + " is not among peers ("
                            + peers.stream().map(Peer::id).collect(Collectors.joining(", ")) + ")"));
            // This node's three listeners: on one host, two of them on one port would fail at bind time, later.
            if (admin.port() == metrics.port()) {
                throw new NodeConfigException("metrics.port", metrics.port() + " is also admin.port; the metrics"
                        + " port must be apart from the admin endpoint");
            }
            for (String field : List.of("admin.port", "metrics.port")) {
                int port = field.startsWith("admin") ? admin.port() : metrics.port();
                if (port == self.replicationPort()) {
                    throw new NodeConfigException(field, port + " is also this node's replicationPort (peers["
                            + peers.indexOf(self) + "].replicationPort)");
                }
            }
            if (self.clientPort() != 0) {
                for (String field : List.of("admin.port", "metrics.port", "replicationPort")) {
                    int port = switch (field) {
                        case "admin.port" -> admin.port();
                        case "metrics.port" -> metrics.port();
                        default -> self.replicationPort();
                    };
                    if (port == self.clientPort()) {
                        throw new NodeConfigException("peers[" + peers.indexOf(self) + "].clientPort", self.clientPort()
                                + " is also this node's " + field);
                    }
                }
            }
            if (clientCredentialFile != null && self.clientPort() == 0) {
                throw new NodeConfigException("peers[" + peers.indexOf(self) + "].clientPort", "missing: this node has a"
                        + " clientCredentialFile, so it serves remote clients and needs the port it takes them on");
            }
            if (clientCredentialFile == null) {
                for (Peer p : peers) {
                    if (p.clientPort() != 0) {
                        throw new NodeConfigException("clientCredentialFile", "missing: peers[" + peers.indexOf(p)
                                + "].clientPort is set, but without a client credential no client can connect");
                    }
                }
            }
            if (authorisedClientsFile != null && clientCredentialFile == null) {
                throw new NodeConfigException("authorisedClientsFile", "set, but without clientCredentialFile this node serves"
                        + " no remote clients");
            }
            if (writeKeyDirectory != null && clientCredentialFile == null) {
                throw new NodeConfigException("writeKeyDirectory", "set, but without clientCredentialFile this node serves"
                        + " no remote clients, so it takes no remote APPEND to check");
            }
            unique(peers, p -> p.identityKey() == null ? "unpinned " + p.id() : java.util.Base64.getEncoder().encodeToString(
                    io.queueenterprise.crypto.IdentityKey.parsePublicKey(p.identityKey())), "peers", "identityKey");
            if (self.identityKey() != null && identityKeyFile == null) {
                throw new NodeConfigException("identityKeyFile", "missing: peers[" + peers.indexOf(self) + "].identityKey pins"
                        + " this node's identity, whose key file it needs");
            } // one identity per node: no node may speak as another
            return new NodeConfig(version, nodeId, dataDirectory, peers, peerCredentialFile, queues, admin, metrics, idle,
                    clientCredentialFile, writeKeyDirectory, identityKeyFile, authorisedClientsFile, leaseTimeout,
                    drawIdentityKeyIfAbsent, peerIdentitiesFile);
        }

        Peer peer(Fields f) {
            Peer peer = new Peer(f.requiredName("id"), f.requiredText("host"), f.requiredInt("replicationPort", 1, 65535),
                    f.optionalInt("clientPort", 1, 65535).orElse(0), f.optionalText("identityKey").orElse(null));
            if (peer.identityKey() != null) {
                try {
                    io.queueenterprise.crypto.IdentityKey.parsePublicKey(peer.identityKey());
                } catch (IllegalArgumentException e) {
                    throw new NodeConfigException(f.path("identityKey"), e.getMessage());
                }
            }
            if (peer.host().chars().anyMatch(Character::isWhitespace)) {
                throw new NodeConfigException(f.path("host"), quote(peer.host()) + " is not a host name or address");
            }
            f.refuseUnknown();
            return peer;
        }

        QueueSpec queue(Fields f) {
            String name = f.requiredName("name");
            String rollCycle = f.requiredText("rollCycle");
            // The engine's names (RollCycleNames): Chronicle's RollCycles, and its TestRollCycles for tests.
            if (Arrays.stream(RollCycles.values()).noneMatch(r -> r.name().equals(rollCycle))
                    && Arrays.stream(TestRollCycles.values()).noneMatch(r -> r.name().equals(rollCycle))) {
                throw new NodeConfigException(f.path("rollCycle"), quote(rollCycle) + " is not one of "
                        + Arrays.stream(RollCycles.values()).map(Enum::name).collect(Collectors.joining(", "))
                        + " (nor a TestRollCycles name)");
            }
            Encryption encryption = f.requiredEnum("encryption", Encryption.class);
            AckMode ackMode = f.optionalEnum("ackMode", AckMode.class).orElse(DEFAULT_ACK_MODE);
            Duration ackTimeout = f.optionalDuration("ackTimeout").orElse(DEFAULT_ACK_TIMEOUT);
            Retention retention = Retention.unbounded();
            Optional<Fields> retentionFields = f.optionalObject("retention");
            if (retentionFields.isPresent()) {
                Fields r = retentionFields.get();
                retention = new Retention(r.optionalDuration("maxAge"), r.optionalSize("maxBytes"));
                r.refuseUnknown();
                if (retention.maxAge().isEmpty() && retention.maxBytes().isEmpty()) {
                    throw new NodeConfigException(f.path("retention"), "names neither maxAge nor maxBytes"
                            + " (leave retention out for no bound)");
                }
            }
            f.refuseUnknown();
            return new QueueSpec(name, rollCycle, encryption, ackMode, ackTimeout, retention);
        }
    }

    private static <T> void unique(List<T> items, Function<T, String> key, String list, String field) {
        Map<String, Integer> seen = new HashMap<>();
        for (int i = 0; i < items.size(); i++) {
            Integer first = seen.putIfAbsent(key.apply(items.get(i)), i);
            if (first != null) {
                throw new NodeConfigException(list + "[" + i + "]." + field, quote(key.apply(items.get(i)))
                        + " is already used by " + list + "[" + first + "]");
            }
        }
    }

    static String quote(String s) {
        return com.fasterxml.jackson.databind.node.TextNode.valueOf(s).toString();
    }

    /** One mapping of the document at a path; remembers which fields were read so that the rest can be refused. */
    private static final class Fields {
        private final String path;
        private final ObjectNode node;
        private final Set<String> read = new LinkedHashSet<>();

        Fields(String path, JsonNode node) {
            if (!node.isObject()) {
                throw new NodeConfigException(path, "must be a mapping of fields, got " + describe(node));
            }
            this.path = path;
            this.node = (ObjectNode) node;
        }

        String path(String field) {
            return path.isEmpty() ? field : path + "." + field;
        }

        private Optional<JsonNode> optional(String field) {
            read.add(field);
            JsonNode value = node.get(field);
            return value == null || value.isNull() ? Optional.empty() : Optional.of(value);
        }

        private JsonNode required(String field) {
            return optional(field).orElseThrow(() -> new NodeConfigException(path(field), "is required"));
        }

        Optional<String> optionalText(String field) {
            return optional(field).map(v -> text(field, v));
        }

        String requiredText(String field) {
            return text(field, required(field));
        }

        private String text(String field, JsonNode value) {
            if (!value.isTextual()) {
                throw new NodeConfigException(path(field), "must be a string, got " + describe(value));
            }
            if (value.asText().isBlank()) {
                throw new NodeConfigException(path(field), "must not be empty");
            }
            return value.asText();
        }

        String requiredName(String field) {
            String name = requiredText(field);
            if (!NAME.matcher(name).matches()) {
                throw new NodeConfigException(path(field), quote(name) + " is not a safe name: " + SAFE_NAME_RULE);
            }
            return name;
        }

        Path requiredPath(String field, Path base) {
            String text = requiredText(field);
            try {
                return base.resolve(text).normalize();
            } catch (InvalidPathException e) {
                throw new NodeConfigException(path(field), quote(text) + " is not a valid path: " + e.getReason());
            }
        }

        int requiredInt(String field, int min, int max) {
            JsonNode value = required(field);
            if (!value.isIntegralNumber() || !value.canConvertToLong() || value.asLong() < min || value.asLong() > max) {
                throw new NodeConfigException(path(field), describe(value) + " is not an integer in " + min + ".." + max);
            }
            return value.asInt();
        }

        Optional<Integer> optionalInt(String field, int min, int max) {
            return optional(field).isPresent() ? Optional.of(requiredInt(field, min, max)) : Optional.empty();
        }

        Optional<Boolean> optionalBoolean(String field) {
            return optional(field).map(value -> {
                if (!value.isBoolean()) {
                    throw new NodeConfigException(path(field), describe(value) + " is not true or false");
                }
                return value.asBoolean();
            });
        }

        <E extends Enum<E>> E requiredEnum(String field, Class<E> type) {
            return enumValue(field, required(field), type);
        }

        <E extends Enum<E>> Optional<E> optionalEnum(String field, Class<E> type) {
            return optional(field).map(v -> enumValue(field, v, type));
        }

        private <E extends Enum<E>> E enumValue(String field, JsonNode value, Class<E> type) {
            String names = Arrays.stream(type.getEnumConstants()).map(Enum::name).collect(Collectors.joining(", "));
            if (value.isTextual()) {
                for (E constant : type.getEnumConstants()) {
                    if (constant.name().equals(value.asText())) {
                        return constant;
                    }
                }
            }
            throw new NodeConfigException(path(field), describe(value) + " is not one of " + names);
        }

        /** {@code 250ms}, {@code 30s}, {@code 5m}, {@code 24h}, {@code 7d}; more than zero. */
        Optional<Duration> optionalDuration(String field) {
            return optional(field).map(value -> {
                Matcher m = DURATION.matcher(value.isTextual() ? value.asText() : "");
                if (!m.matches() || Long.parseLong(m.group(1)) == 0) {
                    throw new NodeConfigException(path(field), describe(value) + " is not a duration above zero"
                            + " (a whole number with ms, s, m, h or d: 250ms, 30s, 24h)");
                }
                long amount = Long.parseLong(m.group(1));
                return switch (m.group(2)) {
                    case "ms" -> Duration.ofMillis(amount);
                    case "s" -> Duration.ofSeconds(amount);
                    case "m" -> Duration.ofMinutes(amount);
                    case "h" -> Duration.ofHours(amount);
                    default -> Duration.ofDays(amount);
                };
            });
        }

        /** Bytes: a whole number, or one with Ki, Mi, Gi or Ti (powers of 1024, as Kubernetes quantities); above zero. */
        Optional<Long> optionalSize(String field) {
            return optional(field).map(value -> {
                String text = value.isIntegralNumber() || value.isTextual() ? value.asText() : "";
                Matcher m = SIZE.matcher(text);
                String problem = describe(value) + " is not a size above zero (bytes, or a whole number with Ki, Mi,"
                        + " Gi or Ti: 512Mi, 10Gi)";
                if (!m.matches()) {
                    throw new NodeConfigException(path(field), problem);
                }
                try {
                    long bytes = Math.multiplyExact(Long.parseLong(m.group(1)),
                            m.group(2) == null ? 1L : SIZE_UNITS.get(m.group(2)));
                    if (bytes <= 0) {
                        throw new NodeConfigException(path(field), problem);
                    }
                    return bytes;
                } catch (NumberFormatException | ArithmeticException e) {
                    throw new NodeConfigException(path(field), describe(value) + " is too large a size");
                }
            });
        }

        Fields requiredObject(String field) {
            return new Fields(path(field), required(field));
        }

        Optional<Fields> optionalObject(String field) {
            return optional(field).map(v -> new Fields(path(field), v));
        }

        <T> List<T> requiredList(String field, Function<Fields, T> element) {
            JsonNode value = required(field);
            if (!value.isArray() || value.isEmpty()) {
                throw new NodeConfigException(path(field), "must be a list of at least one entry, got " + describe(value));
            }
            List<T> list = new ArrayList<>();
            for (int i = 0; i < value.size(); i++) {
                list.add(element.apply(new Fields(path(field) + "[" + i + "]", value.get(i))));
            }
            return list;
        }

        /** A field this schema does not know is refused: a misspelling must not fall back to a default. */
        void refuseUnknown() {
            for (Iterator<String> names = node.fieldNames(); names.hasNext(); ) {
                String name = names.next();
                if (!read.contains(name)) {
                    throw new NodeConfigException(path(name), "unknown field (known here: " + String.join(", ", read) + ")");
                }
            }
        }
    }

    /** A value as the message shows it: strings quoted, numbers as they are, other kinds by kind. */
    private static String describe(JsonNode value) {
        JsonNodeType type = value.getNodeType();
        return switch (type) {
            case STRING, NUMBER, BOOLEAN -> value.toString();
            case NULL, MISSING -> "nothing";
            default -> "a " + type.name().toLowerCase(Locale.ROOT).replace("object", "mapping").replace("array", "list");
        };
    }
}
