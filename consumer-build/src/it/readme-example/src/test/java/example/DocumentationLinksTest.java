package example;

import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/**
 * Every relative link in the README, CONTRIBUTING.md and docs/ resolves: the file exists, and a {@code #anchor} names a
 * heading of the Markdown file it points to (GitHub's slugs: lower case, punctuation dropped, spaces to hyphens, a
 * repeated heading suffixed {@code -1}, {@code -2}). Links inside code are not links and are skipped.
 */
class DocumentationLinksTest {

    private static final Pattern FENCE = Pattern.compile("^\\s*```.*?^\\s*```", Pattern.DOTALL | Pattern.MULTILINE);
    private static final Pattern CODE_SPAN = Pattern.compile("`[^`\\n]*`");
    private static final Pattern LINK = Pattern.compile("\\]\\(([^)\\s]+)\\)");
    private static final Pattern HEADING = Pattern.compile("^#{1,6}\\s+(.*)$", Pattern.MULTILINE);
    private static final Pattern SCHEME = Pattern.compile("^[a-zA-Z][a-zA-Z0-9+.-]*:");

    private final Path root = Path.of(System.getProperty("readme")).toAbsolutePath().getParent();

    @Test
    void everyRelativeLink_resolvesToAFileAndAnchor() throws IOException {
        List<String> broken = new ArrayList<>();
        int checked = 0;
        for (Path page : pages()) {
            String text = CODE_SPAN.matcher(FENCE.matcher(Files.readString(page)).replaceAll("")).replaceAll("");
            Matcher link = LINK.matcher(text);
            while (link.find()) {
                String target = link.group(1);
                if (SCHEME.matcher(target).find()) {
                    continue; // https:, mailto: ...
                }
                checked++;
                int hash = target.indexOf('#');
                String file = hash < 0 ? target : target.substring(0, hash);
                Path resolved = file.isEmpty() ? page : page.getParent().resolve(file).normalize();
                String where = root.relativize(page) + ": (" + target + ")";
                if (!Files.exists(resolved)) {
                    broken.add(where + " - no file " + root.relativize(resolved));
                } else if (hash >= 0 && resolved.toString().endsWith(".md")) {
                    String anchor = target.substring(hash + 1);
                    if (!anchors(resolved).contains(anchor)) {
                        broken.add(where + " - no heading with the anchor #" + anchor + " in " + root.relativize(resolved));
                    }
                }
            }
        }
        assertTrue(checked > 50, "only " + checked + " relative links found: is " + root + " the repository?");
        assertTrue(broken.isEmpty(), broken.size() + " broken links:\n" + String.join("\n", broken));
    }

    private List<Path> pages() throws IOException {
        List<Path> pages = new ArrayList<>(List.of(root.resolve("README.md"), root.resolve("CONTRIBUTING.md")));
        try (Stream<Path> docs = Files.walk(root.resolve("docs"))) {
            pages.addAll(docs.filter(p -> p.toString().endsWith(".md")).sorted().collect(Collectors.toList()));
        }
        return pages;
    }

    private static Set<String> anchors(Path markdown) {
        String text;
        try {
            text = FENCE.matcher(Files.readString(markdown)).replaceAll("");
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        Map<String, Integer> seen = new HashMap<>();
        Set<String> anchors = new HashSet<>();
        Matcher heading = HEADING.matcher(text);
        while (heading.find()) {
            String slug = heading.group(1)
                    .strip()
                    .toLowerCase(Locale.ROOT)
                    .replaceAll("[^\\p{L}\\p{N} _-]", "")
                    .replace(' ', '-');
            int n = seen.merge(slug, 1, Integer::sum) - 1;
            anchors.add(n == 0 ? slug : slug + "-" + n);
        }
        return anchors;
    }
}
