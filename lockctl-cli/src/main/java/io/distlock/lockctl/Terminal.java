package io.distlock.lockctl;

import java.io.Console;
import java.util.Optional;

/** The person at the terminal, whom {@code lockctl locks break} asks before it deletes anything. */
@FunctionalInterface
interface Terminal {

    /**
     * Asks {@code question} and waits for the answer.
     *
     * @return the line typed, or null at the end of input
     */
    String ask(String question);

    /** The terminal this process runs at; empty when none is attached ({@link System#console()} is null). */
    static Optional<Terminal> system() {
        Console console = System.console();
        return console == null ? Optional.empty() : Optional.of(question -> console.readLine("%s", question));
    }
}
