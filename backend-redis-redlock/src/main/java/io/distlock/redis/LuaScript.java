package io.distlock.redis;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;

/** A Lua script read from this package's resources, with the SHA-1 digest that {@code EVALSHA} names it by. */
final class LuaScript {

    static final LuaScript RELEASE = load("release.lua");
    static final LuaScript RENEW = load("renew.lua", "renewed.lua");
    static final LuaScript SHARED = load("shared.lua", "renewed.lua");
    static final LuaScript HOLDERS = load("holders.lua");

    private final String name;
    private final String body;
    private final String sha;

    private LuaScript(String name, String body) {
        this.name = name;
        this.body = body;
        this.sha = sha1(body);
    }

    String name() {
        return name;
    }

    String body() {
        return body;
    }

    /** The digest Redis computes for {@link #body()}: the script's name in {@code EVALSHA}. */
    String sha() {
        return sha;
    }

    /**
     * The script {@code resource}, after the {@code preludes} (functions it calls: a Lua script sent by {@code EVAL}
     * cannot load another), in that order.
     */
    private static LuaScript load(String resource, String... preludes) {
        StringBuilder body = new StringBuilder();
        for (String prelude : preludes) {
            body.append(read(prelude));
        }
        return new LuaScript(resource, body.append(read(resource)).toString());
    }

    private static String read(String resource) {
        try (InputStream in = LuaScript.class.getResourceAsStream(resource)) {
            if (in == null) {
                throw new IllegalStateException("Lua script " + resource + " missing from the backend's jar");
            }
            return new String(in.readAllBytes(), StandardCharsets.UTF_8);
        } catch (IOException e) {
            throw new UncheckedIOException("Could not read Lua script " + resource, e);
        }
    }

    private static String sha1(String text) {
        try {
            return HexFormat.of()
                    .formatHex(MessageDigest.getInstance("SHA-1").digest(text.getBytes(StandardCharsets.UTF_8)));
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("SHA-1 is required of every Java runtime", e);
        }
    }

    @Override
    public String toString() {
        return name + "@" + sha;
    }
}
