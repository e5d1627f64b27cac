/**
 * `node tools/example-setup/dist/main.js [--force] [--repository DIR]`: generates the
 * example pipeline's tokenizer files and bert_classifier/1/model.onnx (run by `npm start`).
 */
import { setupExample } from './setup.ts';

const args = process.argv.slice(2);
const repoIndex = args.indexOf('--repository');
try {
  setupExample({
    force: args.includes('--force'),
    ...(repoIndex >= 0 && args[repoIndex + 1] ? { repository: args[repoIndex + 1] } : {}),
    log: (line) => process.stderr.write(`${line}\n`),
  });
} catch (error) {
  process.stderr.write(`example-setup: ${error instanceof Error ? error.message : String(error)}\n`);
  process.exitCode = 1;
}
