package searchport.testing;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

import org.opensearch.analysis.common.CommonAnalysisPlugin;
import org.opensearch.common.logging.LogConfigurator;
import org.opensearch.common.settings.Settings;
import org.opensearch.common.unit.TimeValue;
import org.opensearch.env.Environment;
import org.opensearch.geo.GeoModulePlugin;
import org.opensearch.index.mapper.MapperExtrasPlugin;
import org.opensearch.join.ParentJoinPlugin;
import org.opensearch.node.Node;
import org.opensearch.painless.PainlessPlugin;
import org.opensearch.plugins.Plugin;
import org.opensearch.transport.Netty4Plugin;

/**
 * One OpenSearch node in this JVM, on 127.0.0.1, with the modules given as classpath plugins
 * (the way OpenSearch's own test framework starts a node). Arguments: {@code --port N}
 * (HTTP) and {@code --home DIR} (a folder of its own: config, data and logs go under it).
 * Prints {@code ready http://127.0.0.1:N} once the cluster is yellow, then serves until the
 * JVM is told to stop (SIGTERM or SIGINT), when it closes the node. With
 * {@code --exit-with-stdin} it also stops when its standard input closes, so a node started
 * by a test session that was killed does not outlive it.
 */
public final class OpenSearchNode {

    private static final List<Class<? extends Plugin>> MODULES = List.of(
        Netty4Plugin.class, CommonAnalysisPlugin.class, MapperExtrasPlugin.class,
        GeoModulePlugin.class, ParentJoinPlugin.class, PainlessPlugin.class);

    /**
     * The k-NN plugin (knn_vector fields, the knn query), unpacked by Maven into
     * target/knn/ and on the class path from there, so it is looked up by name rather than
     * compiled against. Its Lucene engine is pure Java; the Faiss and NMSLIB engines need
     * native libraries this node does not have.
     */
    private static final String KNN_PLUGIN = "org.opensearch.knn.plugin.KNNPlugin";

    private static List<Class<? extends Plugin>> plugins() throws ClassNotFoundException {
        List<Class<? extends Plugin>> found = new ArrayList<>(MODULES);
        found.add(Class.forName(KNN_PLUGIN).asSubclass(Plugin.class));
        return found;
    }

    /** Node's constructor that takes plugins from the classpath is protected. */
    private static final class EmbeddedNode extends Node {
        EmbeddedNode(Environment environment, Collection<Class<? extends Plugin>> plugins) {
            super(environment, plugins, true);
        }
    }

    private OpenSearchNode() {
    }

    public static void main(String[] args) throws Exception {
        int port = 9250;
        Path home = null;
        boolean exitWithStdin = false;
        for (int i = 0; i < args.length; i++) {
            switch (args[i]) {
                case "--port" -> port = Integer.parseInt(args[++i]);
                case "--home" -> home = Path.of(args[++i]);
                case "--exit-with-stdin" -> exitWithStdin = true;
                default -> throw new IllegalArgumentException("unknown argument " + args[i]);
            }
        }
        if (home == null) {
            throw new IllegalArgumentException("--home DIR is required");
        }
        Files.createDirectories(home.resolve("config"));
        Settings settings = Settings.builder()
            .put("cluster.name", "searchport-test")
            .put("node.name", "searchport-test-node")
            .put("path.home", home.toString())
            .put("path.data", home.resolve("data").toString())
            .put("path.logs", home.resolve("logs").toString())
            .put("network.host", "127.0.0.1")
            .put("http.port", port)
            .put("transport.port", 0)
            .put("discovery.type", "single-node")
            // A test node on a disk that may be nearly full still takes writes.
            .put("cluster.routing.allocation.disk.threshold_enabled", false)
            // A small heap: the parent breaker counts what is reserved, not the JVM's guess.
            .put("indices.breaker.total.use_real_memory", false)
            .build();
        LogConfigurator.configureWithoutConfig(settings);
        Environment environment = new Environment(settings, home.resolve("config"));
        Node node = new EmbeddedNode(environment, plugins());

        CountDownLatch stopped = new CountDownLatch(1);
        Runtime.getRuntime().addShutdownHook(new Thread(() -> {
            try {
                node.close();
                node.awaitClose(20, TimeUnit.SECONDS);
            } catch (Exception exc) {
                exc.printStackTrace();
            } finally {
                stopped.countDown();
            }
        }, "opensearch-node-stop"));

        if (exitWithStdin) {
            Thread watcher = new Thread(() -> {
                try {
                    while (System.in.read() != -1) {
                        // nothing is sent; only the end of the stream matters
                    }
                } catch (java.io.IOException exc) {
                    // a broken pipe means the parent is gone too
                }
                System.exit(0);
            }, "opensearch-node-parent-watch");
            watcher.setDaemon(true);
            watcher.start();
        }
        node.start();
        node.client().admin().cluster().prepareHealth().setWaitForYellowStatus()
            .get(TimeValue.timeValueSeconds(60));
        System.out.println("ready http://127.0.0.1:" + port);
        System.out.flush();
        stopped.await();
    }
}
