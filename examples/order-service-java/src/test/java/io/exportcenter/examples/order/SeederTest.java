package io.exportcenter.examples.order;

import static org.junit.jupiter.api.Assertions.assertEquals;

import org.junit.jupiter.api.Test;

/** The generator is the C++ sample's splitmix64, draw for draw. */
class SeederTest {
  @Test
  void prngMatchesSplitmix64() {
    Seeder.Prng rng = new Seeder.Prng(20260803L);
    long first = rng.next();
    // splitmix64(20260803) computed independently (python, unsigned 64-bit arithmetic).
    assertEquals(Long.parseUnsignedLong("14844388724618587300"), first);
  }
}
