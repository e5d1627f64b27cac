/** `npm run bench` compares its CPU ratios with the previous run's and says which moved past 5%. */
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { compareWithPrevious } from './pipeline/cpu-agreement.ts';

const dir = mkdtempSync(path.join(os.tmpdir(), 'tritium-cpu-ratios-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('CPU ratio agreement between runs', () => {
  it('has nothing to compare on the first run, then names each ratio that moved more than 5%', () => {
    const file = path.join(dir, 'sub', 'ratios.json');
    expect(compareWithPrevious(file, { '(a) c=64': 1.1, '(c) c=64': 2.0 })).toBeUndefined();
    expect(compareWithPrevious(file, { '(a) c=64': 1.12, '(c) c=64': 2.0, '(new) c=1': 3 })).toEqual({ compared: 2, moved: [] });
    expect(compareWithPrevious(file, { '(a) c=64': 1.3, '(c) c=64': 2.01 })).toEqual({ compared: 2, moved: [{ key: '(a) c=64', previous: 1.12, now: 1.3 }] });
  });
});
