package io.distlock.testing;

import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Base64;
import java.util.Optional;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/** A raw etcd v3 client over the HTTP/JSON gateway ({@code /v3/kv/put}, {@code /v3/kv/range}), for fixture tests. */
final class EtcdHttp {

    private static final Pattern VALUE = Pattern.compile("\"value\"\\s*:\\s*\"([^\"]*)\"");

    private EtcdHttp() {}

    static void put(String clientUrl, String key, String value, Duration timeout)
            throws IOException, InterruptedException {
        String body = "{\"key\":\"" + b64(key) + "\",\"value\":\"" + b64(value) + "\"}";
        String response = post(clientUrl, "/v3/kv/put", body, timeout);
        if (!response.contains("\"header\"")) {
            throw new IOException("Unexpected put response: " + response);
        }
    }

    static Optional<String> get(String clientUrl, String key, Duration timeout)
            throws IOException, InterruptedException {
        String response = post(clientUrl, "/v3/kv/range", "{\"key\":\"" + b64(key) + "\"}", timeout);
        Matcher m = VALUE.matcher(response);
        return m.find()
                ? Optional.of(new String(Base64.getDecoder().decode(m.group(1)), StandardCharsets.UTF_8))
                : Optional.empty();
    }

    private static String post(String clientUrl, String path, String body, Duration timeout)
            throws IOException, InterruptedException {
        // A fresh client per call: no pooled connection outlives a proxy fault.
        HttpClient client = HttpClient.newBuilder().connectTimeout(timeout).build();
        HttpRequest request = HttpRequest.newBuilder(URI.create(clientUrl + path))
                .timeout(timeout)
                .POST(HttpRequest.BodyPublishers.ofString(body))
                .build();
        HttpResponse<String> response = client.send(request, HttpResponse.BodyHandlers.ofString());
        if (response.statusCode() != 200) {
            throw new IOException(
                    "HTTP " + response.statusCode() + " from " + clientUrl + path + ": " + response.body());
        }
        return response.body();
    }

    private static String b64(String s) {
        return Base64.getEncoder().encodeToString(s.getBytes(StandardCharsets.UTF_8));
    }
}
