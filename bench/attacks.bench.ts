/**
 * Attacks on `tritium serve`, each beside steady neighbours: for every scenario a fresh
 * server starts, small HTTP and gRPC infers run one at a time every 10 ms throughout, and the report
 * gives the server's RSS before, at its peak during and after the attack, its CPU-seconds, and each
 * neighbour's latency (p50/p99/max) and failures quiet, under attack and after.
 *
 *     npx tsc -b && node bench/dist/attacks.bench.js [scenario ...]   (no name: all of them)
 *
 * Env: ATTACK_QUIET_MS (3000) and ATTACK_RECOVERY_MS (2000), the windows before and after the attack;
 * ATTACK_TRITIUM_BIN, another build's apps/server/bin/tritium.mjs to attack (e.g. main before a fix);
 * each scenario's own variables are in its file under bench/attack/.
 * A scenario is a file under bench/attack/ exporting an AttackScenario (attack/scenario.ts), added
 * to SCENARIOS below.
 */
import { runScenario } from './attack/harness.ts';
import type { AttackScenario } from './attack/scenario.ts';
import { grpcGzipBomb } from './attack/grpc-gzip-bomb.ts';
import { idleGrpcConnections } from './attack/idle-grpc-connections.ts';
import { slowReaderGrpc, slowReaderHttp } from './attack/slow-stream-readers.ts';
import { bytesElementsGrpc, bytesElementsHttp } from './attack/bytes-elements.ts';

const SCENARIOS: readonly AttackScenario[] = [grpcGzipBomb, idleGrpcConnections, slowReaderGrpc, slowReaderHttp, bytesElementsHttp, bytesElementsGrpc];

const asked = process.argv.slice(2);
const unknown = asked.filter((name) => !SCENARIOS.some((s) => s.name === name));
if (unknown.length > 0) {
  console.error(`unknown scenario(s): ${unknown.join(', ')}; known: ${SCENARIOS.map((s) => s.name).join(', ')}`);
  process.exit(2);
}
for (const scenario of SCENARIOS.filter((s) => asked.length === 0 || asked.includes(s.name))) {
  console.log(`\n== ${scenario.name}: ${scenario.description}`);
  const report = await runScenario(scenario);
  for (const line of report.lines) console.log(`   ${line}`);
}
