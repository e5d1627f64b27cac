/**
 * Core's public surface: the names each entry of package.json `exports` gives other packages.
 *
 * The root entry is what an embedder needs and nothing else; it may hold at most ROOT_BUDGET names.
 * The budget is the root as it stands (80) plus a little room:
 * - 13 values an embedder calls: `InferenceServer`, `InferError` and `ERROR_CODES`, the tensor
 *   builders and views (`tensorFromTyped`, `tensorFromStrings`, `typedView`, `decodeStrings`),
 *   `DATA_TYPES`/`isDataType`, and the logger helpers (`silentLogger`, `logLines`, `logBlock`,
 *   `escapeControl`);
 * - 35 `ModelConfig` types, one per message and enum of Triton's model_config.proto, which the
 *   proto fixes, not us;
 * - ~30 types of the requests, responses, tensors, metadata, statistics and errors those values
 *   take and give back.
 * A name past the budget belongs to the entry of its extension point (or stays internal), not here.
 *
 * Each subpath's names are listed below, so that a new export is a decision made in review: add it
 * to the list when another package needs it, and keep what only core uses internal.
 */
import { readFileSync } from 'node:fs';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';

const ROOT_BUDGET = 84;
const ROOT_VALUE_BUDGET = 15;

const SUBPATH_NAMES: Record<string, string> = {
  './backend':
    'AutoCompleteSpec BACKEND_API_VERSION Backend BackendModel ConfigTensorPlan ControlFlags CustomMetricsSink ExecuteContext ' +
    'ExecuteOutput ExecuteResult ExecuteTimings GroupedExecuteOptions InstanceSpec LoadSpec ModelInstance PlannedInput ' +
    'RequestInputSpec RequestSpec RunMember RunTimings SequenceTensorSpec SplitOptions answersOfRun compareDimsSupported ' +
    'concatInputs configTensorPlan executeDecoupledToEnd executeInGroups instanceFailure instanceWorkerOptions InstanceWorkerOptions isInstanceFailure ' +
    'outputsToFetch requestSpecOf requestTag rowsOf sequenceTensors shapeToString splitOutputs validateRequest',
  './worker':
    'BlsStream CreateWorkerInstance DEFAULT_MODEL_LOG_BYTES_PER_SEC ISOLATION_KEYS Isolation IsolationDefaults ' +
    'IsolationParameters ReadinessPolicy SEND_CANCELLED_MESSAGE SandboxHost WholeBatchOutput WorkerContext WorkerExecuteContext ' +
    'WorkerExecuteOutput WorkerInstance WorkerInstanceOptions WorkerModelInstance WorkerPolicy WorkerResourceLimits ' +
    'WorkerRestartPolicy boolParameter compiledModule durationParameter isolationParameters probeSandboxHost processAlive restrictToSandbox ' +
    'spawnWorkerInstance terminateWorkerThreads workerBounds',
  './repository':
    'ConfigCodec NormalizeContext RepositoryCallOptions RepositoryEntry RepositoryEntryKind RepositoryFetch RepositorySource ' +
    'checkRelativePath defaultConfigCodec localRepositorySource',
  './trace': 'RequestTrace TraceActivity TraceTensorActivity compositeTrace reportCompute traceNowNs',
  './cache': 'CacheInsertOutcome CacheStoreErrors CachedResponse MaybePromise ResponseCacheStore',
  './config':
    'ConfigError ConfigErrorLocation ConfigValidationError ENUMS EnsembleModelIds EnsembleValidation EnumDescriptor ' +
    'FieldDescriptor JsonPrintOptions MESSAGES composingModels findCircularDependency isEnsembleConfig validateEnsembleModels ' +
    'MessageDescriptor NormalizeOptions ParseOptions ScalarType ValidateOptions ValueType VersionDirEntry configSourcePosition ' +
    'emptyDynamicBatching modelConfigFromJson modelConfigToJson nearestName normalizeModelConfig parseModelConfigText ' +
    'printModelConfigText validateModelConfig',
  './tensor':
    'BytesWriter CONFIG_DATA_TYPES ConfigDataType DATA_TYPE_SIZE TYPED_ARRAY_CONSTRUCTORS TypedArrayConstructor ' +
    'configToWireDataType countBytesElements decodeBytesElements elementCount encodeBytesElements encodePadValue ' +
    'expectedByteSize readU32LE wireToConfigDataType',
  './scheduler':
    'BatcherDeps BatcherOptions Clock DynamicBatcher FailureReason QueuePolicy ResponseOutcome Scheduler SchedulerDeps ' +
    'StatsRecorder batcherOptionsFromConfig createScheduler nullStatsRecorder',
  './metrics':
    'CustomFamilySnapshot CustomMetricSnapshot CustomMetrics HistogramSnapshot LatencyMetricsOptions LatencySnapshot ' +
    'LatencySummaryName MetricKind MetricOp SummarySnapshot TokenStats',
  './server':
    'DEFAULT_MODEL_LIMITS ModelLimits RateLimitResourceFlag SERVER_EXTENSIONS ServerExtension formatTable ' +
    'inputByteSizeMismatch parseModelVersion',
  './testing':
    'BackendConformanceSubject CapturedLog ConformanceCase ConformanceSuite LoadTestInstanceOptions LoadedTestInstance ' +
    'ManualClock OpenedRepository RepositorySourceConformanceSubject TEST_ENTRIES TestBackendOptions TestModelInit ' +
    'addSubBackend backendConformanceSuite captureLog faultBackend identityBackend loadTestInstance manualClock ' +
    'neverAborted repositorySourceConformanceSuite testRequest workerTestBackend',
};

type ExportConditions = Record<string, string>;
const packageJson = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as {
  exports: Record<string, ExportConditions>;
};

interface EntryNames {
  readonly values: string[];
  readonly types: string[];
}

/** Each entry's exported names, read by the TypeScript checker from its source (one program for all). */
function entryNames(): Map<string, EntryNames> {
  const files = new Map(
    Object.entries(packageJson.exports).map(([subpath, conditions]) => [
      subpath,
      new URL(`../${conditions['@tritium/source']}`, import.meta.url).pathname,
    ]),
  );
  const program = ts.createProgram([...files.values()], {
    allowImportingTsExtensions: true,
    noEmit: true,
    module: ts.ModuleKind.NodeNext,
    moduleResolution: ts.ModuleResolutionKind.NodeNext,
    target: ts.ScriptTarget.ES2022,
    customConditions: ['@tritium/source'],
    skipLibCheck: true,
  });
  const checker = program.getTypeChecker();
  const names = new Map<string, EntryNames>();
  for (const [subpath, file] of files) {
    const source = program.getSourceFile(file);
    const moduleSymbol = source && checker.getSymbolAtLocation(source);
    if (!moduleSymbol) throw new Error(`${subpath}: ${file} is not a module`);
    const values: string[] = [];
    const types: string[] = [];
    for (const symbol of checker.getExportsOfModule(moduleSymbol)) {
      const target = symbol.flags & ts.SymbolFlags.Alias ? checker.getAliasedSymbol(symbol) : symbol;
      (target.flags & ts.SymbolFlags.Value ? values : types).push(symbol.name);
    }
    names.set(subpath, { values: values.sort(), types: types.sort() });
  }
  return names;
}

describe('@tritium/core public surface', () => {
  const names = entryNames();

  it(`keeps the root entry within ${ROOT_BUDGET} names, ${ROOT_VALUE_BUDGET} of them values`, () => {
    const root = names.get('.');
    expect(root).toBeDefined();
    expect(root!.values.length, root!.values.join(' ')).toBeLessThanOrEqual(ROOT_VALUE_BUDGET);
    expect(root!.values.length + root!.types.length).toBeLessThanOrEqual(ROOT_BUDGET);
    expect(root!.values).toContain('InferenceServer');
  });

  it('exports from each subpath exactly the names listed here', () => {
    const listed = Object.fromEntries(Object.entries(SUBPATH_NAMES).map(([subpath, list]) => [subpath, list.split(' ').sort()]));
    const actual = Object.fromEntries(
      [...names].filter(([subpath]) => subpath !== '.').map(([subpath, entry]) => [subpath, [...entry.values, ...entry.types].sort()]),
    );
    expect(actual).toEqual(listed);
  });

  it('gives each name one home entry', () => {
    const homes = new Map<string, string[]>();
    for (const [subpath, entry] of names) {
      for (const name of [...entry.values, ...entry.types]) homes.set(name, [...(homes.get(name) ?? []), subpath]);
    }
    const shared = [...homes].filter(([, subpaths]) => subpaths.length > 1).map(([name, subpaths]) => `${name}: ${subpaths.join(', ')}`);
    expect(shared).toEqual([]);
  });

  it('serves every entry from sources in the workspace and from dist when published', () => {
    for (const [subpath, conditions] of Object.entries(packageJson.exports)) {
      const base = subpath === '.' ? 'index' : `${subpath.slice(2)}/index`;
      expect(conditions, subpath).toEqual({
        '@tritium/source': `./src/${base}.ts`,
        types: `./dist/${base}.d.ts`,
        default: `./dist/${base}.js`,
      });
    }
  });
});
