package example;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;

/** A throw-away redis-server on a free loopback port, as a user's own test would start one. */
final class RedisServer implements AutoCloseable {

    private final Process process;
    private final int port;

    private RedisServer(Process process, int port) {
        this.process = process;
        this.port = port;
    }

    static RedisServer start() throws IOException, InterruptedException {
        int port;
        try (ServerSocket free = new ServerSocket(0)) {
            port = free.getLocalPort();
        }
        Path dir = Files.createTempDirectory("readme-example-redis");
        Process process = new ProcessBuilder(
                        "redis-server", "--port", Integer.toString(port), "--bind", "127.0.0.1", "--save", "",
                        "--appendonly", "no", "--dir", dir.toString())
                .redirectErrorStream(true)
                .redirectOutput(dir.resolve("redis.log").toFile())
                .start();
        RedisServer server = new RedisServer(process, port);
        long end = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
        while (!server.answersPing()) {
            if (System.nanoTime() > end || !process.isAlive()) {
                server.close();
                throw new IllegalStateException("redis-server did not answer PING on port " + port);
            }
            Thread.sleep(20);
        }
        return server;
    }

    String address() {
        return "127.0.0.1:" + port;
    }

    private boolean answersPing() {
        try (Socket socket = new Socket("127.0.0.1", port)) {
            OutputStream out = socket.getOutputStream();
            out.write("PING\r\n".getBytes(StandardCharsets.US_ASCII));
            out.flush();
            InputStream in = socket.getInputStream();
            byte[] reply = new byte[7];
            int n = in.read(reply);
            return n > 0 && new String(reply, 0, n, StandardCharsets.US_ASCII).startsWith("+PONG");
        } catch (IOException notYet) {
            return false;
        }
    }

    @Override
    public void close() throws InterruptedException {
        process.destroyForcibly();
        process.waitFor(10, TimeUnit.SECONDS);
    }
}
