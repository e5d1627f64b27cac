/**
 * Manifests as YAML documents, with a header naming the command that made them and a comment
 * where a number is derived from others (the grace period), so an operator reading the file
 * at 3 a.m. sees why it is what it is.
 */
import { Document, isScalar, visit } from 'yaml';
import { EXIT_MARGIN_SECS } from './tritium-container.ts';
import type { DeployOptions } from './deploy-options.ts';

export interface RenderedManifest {
  readonly kind: string;
  readonly yaml: string;
}

function document(manifest: object, o: DeployOptions): Document {
  const doc = new Document(manifest);
  visit(doc, {
    Pair(_, pair) {
      if (isScalar(pair.key) && pair.key.value === 'terminationGracePeriodSeconds' && isScalar(pair.value)) {
        pair.value.comment = ` preStop ${o.preStopSleepSecs} s + --exit-timeout-secs ${o.serve.exitTimeoutSecs} + ${EXIT_MARGIN_SECS} s for the forced exit`;
      }
    },
  });
  return doc;
}

const STRINGIFY = { lineWidth: 0 } as const;

/** One YAML document per manifest, each starting with `header` (comment lines). */
export function renderManifests(manifests: readonly object[], o: DeployOptions, header: string): RenderedManifest[] {
  return manifests.map((m) => {
    const doc = document(m, o);
    doc.commentBefore = header;
    return { kind: (m as { kind: string }).kind, yaml: doc.toString(STRINGIFY) };
  });
}

/** All manifests as one multi-document stream (`kubectl apply -f -`). */
export function renderStream(manifests: readonly object[], o: DeployOptions, header: string): string {
  return manifests
    .map((m, i) => {
      const doc = document(m, o);
      if (i === 0) doc.commentBefore = header;
      return (i === 0 ? '' : '---\n') + doc.toString(STRINGIFY);
    })
    .join('');
}
