/**
 * What a conformance suite hands a test runner: named cases that throw (an AssertionError naming
 * what broke the contract) when an implementation does not keep it, and a `close` that releases
 * what the cases shared. Runner-agnostic, so core needs no test framework and a third-party
 * implementation runs the same suite under whatever runner it uses:
 *
 *     const suite = backendConformanceSuite(subject);
 *     afterAll(() => suite.close());
 *     for (const c of suite.cases) it(c.name, c.run);
 */
export interface ConformanceCase {
  readonly name: string;
  run(): Promise<void>;
}

export interface ConformanceSuite {
  readonly cases: readonly ConformanceCase[];
  /** Releases what the cases shared (loaded models, temp folders). Safe to call once, after the cases. */
  close(): Promise<void>;
}
