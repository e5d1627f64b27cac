// Worker / child-process bootstrap: worker threads do not inherit tsx, so register it here, then load
// the runtime (TypeScript), which imports the model's entry module (.ts or .js).
import { register } from 'tsx/esm/api';

register();
await import('./worker-runtime.ts');
