/**
 * What an attack scenario is: a file under bench/attack/ exporting one of these, registered in
 * bench/attacks.bench.ts. The harness (harness.ts) starts a fresh `tritium serve` for it, with a
 * `neighbour` model (identity, FP32 [-1]) that steady clients call over HTTP and gRPC throughout.
 */

/** One model folder of the scenario's repository: config.pbtxt and files of version 1. */
export interface ScenarioModel {
  readonly config: string;
  readonly files?: Readonly<Record<string, string>>;
}

/** The running server a scenario attacks. */
export interface AttackTarget {
  readonly pid: number;
  readonly httpPort: number;
  readonly grpcPort: number;
  readonly metricsPort: number;
  readonly repository: string;
}

/** What a scenario reports about its own attack (printed as `key: value` lines). */
export type ScenarioResult = Record<string, string | number>;

export interface AttackScenario {
  /** The name to select it by on the command line. */
  readonly name: string;
  /** One line: the attack, and the issue item it measures. */
  readonly description: string;
  /** Models beside `neighbour` (e.g. a decoupled model for stream attacks). */
  readonly models?: Readonly<Record<string, ScenarioModel>>;
  /** Extra `tritium serve` flags. */
  readonly serveArgs?: readonly string[];
  /** Runs the server under `ulimit -n <n>` (both limits), to reach descriptor exhaustion with fewer sockets. */
  readonly serverNoFile?: number;
  /** Work before the server starts (building payloads), kept out of the measured windows. */
  prepare?(): Promise<void>;
  /** The attack; resolves when it is over (every socket it opened closed). */
  run(target: AttackTarget): Promise<ScenarioResult>;
}
