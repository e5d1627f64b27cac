import { describe, expect, it } from 'vitest';
import { loadLevels, parsePerfArgs, UsageError, type PerfOptions } from '../src/index.ts';

const parse = (...argv: string[]) => parsePerfArgs(argv) as PerfOptions;

describe('perf_analyzer command line', () => {
  it('fills perf_analyzer defaults', () => {
    const o = parse('-m', 'sentiment_ensemble');
    expect(o).toMatchObject({
      model: 'sentiment_ensemble',
      modelVersion: '',
      url: 'localhost:8000',
      protocol: 'http',
      batchSize: 1,
      measurementIntervalMs: 5000,
      measurementMode: 'time_windows',
      stabilityPercentage: 10,
      maxTrials: 10,
      stringLength: 128,
    });
    expect(loadLevels(o)).toEqual({ mode: 'concurrency', levels: [1] });
  });

  it("reads the seed's example command and every value spelling", () => {
    const o = parse('-m', 'sentiment_ensemble', '-u', 'my-triton-server:8001', '-i', 'grpc', '--concurrency-range', '1:128', '--input-data', 'client_requests.json');
    expect(o.protocol).toBe('grpc');
    expect(o.url).toBe('my-triton-server:8001');
    expect(o.inputData).toEqual(['client_requests.json']);
    expect(loadLevels(o).levels).toHaveLength(128);
    const p = parse('-m', 'm', '-p5000', '--measurement-interval=250', '-b', '8', '-x', '2', '--percentile=95', '-f', 'out.csv', '--plot', 'out.svg');
    expect(p).toMatchObject({ measurementIntervalMs: 250, batchSize: 8, modelVersion: '2', percentile: 95, filename: 'out.csv', plot: 'out.svg' });
  });

  it('takes --streaming with gRPC only, with perf_analyzer\'s message otherwise', () => {
    expect((parsePerfArgs(['-m', 'x', '-i', 'grpc', '--streaming']) as PerfOptions).streaming).toBe(true);
    expect((parsePerfArgs(['-m', 'x', '-i', 'grpc']) as PerfOptions).streaming).toBeUndefined();
    expect(() => parsePerfArgs(['-m', 'x', '--streaming'])).toThrow('streaming is only allowed with gRPC protocol');
  });

  it('defaults the gRPC port to 8001', () => {
    expect(parse('-m', 'm', '-i', 'grpc').url).toBe('localhost:8001');
  });

  it('sweeps concurrency start:end:step and request rates as floats', () => {
    expect(loadLevels(parse('-m', 'm', '--concurrency-range', '1:64:8')).levels).toEqual([1, 9, 17, 25, 33, 41, 49, 57]);
    expect(loadLevels(parse('-m', 'm', '--concurrency-range', '4')).levels).toEqual([4]);
    expect(loadLevels(parse('-m', 'm', '--request-rate-range', '10:20:5'))).toEqual({ mode: 'request_rate', levels: [10, 15, 20] });
    expect(loadLevels(parse('-m', 'm', '--request-rate-range', '2.5'))).toEqual({ mode: 'request_rate', levels: [2.5] });
  });

  it('collects repeatable --shape and --input-data', () => {
    const o = parse('-m', 'm', '--shape', 'INPUT_IDS:1,16', '--shape', 'ATTENTION_MASK:16', '--input-data', 'zero', '--input-data', 'random', '--string-data', 'hello');
    expect([...o.shapes]).toEqual([
      ['INPUT_IDS', [1, 16]],
      ['ATTENTION_MASK', [16]],
    ]);
    expect(o.inputData).toEqual(['zero', 'random']);
    expect(o.stringData).toBe('hello');
  });

  it.each([
    [[], '-m (model name) is required'],
    [['-m', 'm', '-i', 'udp'], "invalid value 'udp' for -i: expected http or grpc"],
    [['-m', 'm', '--concurrency-range', '0:4'], "invalid value '0' for --concurrency-range: expected an integer >= 1"],
    [['-m', 'm', '--concurrency-range', '8:2'], "invalid value '8:2' for --concurrency-range: end (2) is less than start (8)"],
    [['-m', 'm', '--concurrency-range', '1:2:3:4'], "invalid value '1:2:3:4' for --concurrency-range: expected start:end:step"],
    [['-m', 'm', '--concurrency-range', '1', '--request-rate-range', '5'], '--concurrency-range and --request-rate-range cannot be used together'],
    [['-m', 'm', '--shape', 'X'], "invalid value 'X' for --shape: expected NAME:d1,d2,..."],
    [['-m', 'm', '--shape', 'X:1,a'], "invalid value 'a' for --shape: expected an integer >= 0"],
    [['-m', 'm', '-b', '0'], "invalid value '0' for -b: expected an integer >= 1"],
    [['-m', 'm', '--percentile', '100'], "invalid value '100' for --percentile: expected 1..99"],
    [['-m', 'm', '--bogus'], "unknown option '--bogus'"],
    [['-m', 'm', 'constructor', 'x'], "unknown option 'constructor'"],
    [['-m', 'm', '__proto__', 'x'], "unknown option '__proto__'"],
    [['-m'], "option '-m' needs a value"],
    [['-m', 'm', '--service-kind', 'torchserve'], "invalid value 'torchserve' for --service-kind: only triton is supported"],
    [['-m', 'm', '-H', 'novalue'], "invalid value 'novalue' for -H: expected Header:Value"],
    [['-m', 'm', '--request-parameter', 'a:1'], "invalid value 'a:1' for --request-parameter: expected name:value:type"],
    [['-m', 'm', '--request-parameter', 'a:yes:bool'], "invalid value 'a:yes:bool' for --request-parameter: type must be bool (true|false), int or string"],
    [['-m', 'm', '--request-parameter', 'a:1.5:int'], "invalid value '1.5' for --request-parameter: expected an integer >= -9007199254740991"],
  ])('rejects %j with a message naming the option', (argv, message) => {
    expect(() => parsePerfArgs(argv)).toThrow(new UsageError(message));
  });

  it("takes perf_analyzer's -H headers and --request-parameter name:value:type", () => {
    const o = parse('-m', 'm', '-H', 'Authorization: Bearer a:b', '-H', 'x-tenant:blue', '--request-parameter', 'max_tokens:256:int', '--request-parameter', 'stream:false:bool', '--request-parameter', 'note:a:b:string');
    expect(o.headers).toEqual({ authorization: 'Bearer a:b', 'x-tenant': 'blue' });
    expect(o.requestParameters).toEqual({ max_tokens: 256, stream: false, note: 'a:b' });
  });

  it('returns help for -h', () => {
    expect(parsePerfArgs(['-h'])).toBe('help');
  });
});
