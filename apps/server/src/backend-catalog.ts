/** Every Backend bound under TOKENS.Backend, multi-injected (none bound → empty). */
import { injectable, multiInject, optional } from 'inversify';
import type { Backend } from '@tritium/core/backend';
import { TOKENS } from './tokens.ts';

@injectable()
export class BackendCatalog {
  readonly backends: readonly Backend[];

  constructor(@multiInject(TOKENS.Backend) @optional() backends: Backend[] | undefined) {
    this.backends = backends ?? [];
  }
}
