package io.distlock.kit;

import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * Marks a kit test that runs only when the backend under test offers what it needs. When it does not, JUnit reports
 * the test as skipped with the reason, which shows in the console (logged at WARN by {@code io.distlock.kit}) and in
 * the report's {@code message} attribute.
 */
@Target(ElementType.METHOD)
@Retention(RetentionPolicy.RUNTIME)
@ExtendWith(KitConditions.class)
public @interface Requires {

    /** What the test needs, all of it. */
    Need[] value();
}
