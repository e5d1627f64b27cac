import { it } from 'vitest';
import { startTestServer } from './support/start-server.ts';
it('t', async () => {
  for (const models of [['simple'], ['simple', 'strings', 'addsub', 'repeat']]) {
    const t0 = performance.now();
    const s = await startTestServer({}, undefined, models);
    const t1 = performance.now();
    await s.close();
    process.stderr.write(`${models.length} start ${(t1 - t0).toFixed(0)} stop ${(performance.now() - t1).toFixed(0)}\n`);
  }
});
