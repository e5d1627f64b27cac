/**
 * A generating decoupled model for OpenAI clients: it "generates" the last user message of a chat
 * (or a completion's prompt) back, one word per response, as an LLM streams its tokens. Words are
 * its tokens: `num_input_tokens` counts the prompt's, `num_output_tokens` each response's.
 * `stream` false sends the whole answer in one response; `max_tokens` stops after that many words.
 * A word `FAIL` in the prompt makes it fail after the words before it (for clients' error paths).
 */
import {
  InferenceResponse,
  TRITONSERVER_RESPONSE_COMPLETE_FINAL,
  Tensor,
  TritonError,
  getInputTensorByName,
  type InferenceRequest,
} from '@tritium/backend-python-like/model';

interface Message {
  readonly role: string;
  readonly content: string;
}

const words = (text: string): string[] => text.split(/\s+/).filter((w) => w !== '');

/** The prompt's words and the answer's: the last user message of a chat, or the completion prompt. */
function promptOf(request: InferenceRequest): { prompt: string[]; answer: string[] } {
  const messages = getInputTensorByName(request, 'messages');
  if (messages) {
    const chat = JSON.parse(messages.strings()[0]!) as Message[];
    const lastUser = [...chat].reverse().find((m) => m.role === 'user');
    return { prompt: chat.flatMap((m) => words(m.content)), answer: words(lastUser?.content ?? '') };
  }
  const text = getInputTensorByName(request, 'text_input');
  if (!text) throw new TritonError('either text_input or messages is required', TritonError.INVALID_ARG);
  const prompt = words(text.strings()[0]!);
  return { prompt, answer: prompt };
}

function response(text: string, inputTokens: number, outputTokens: number): InferenceResponse {
  return new InferenceResponse({
    outputTensors: [
      new Tensor('text_output', [text], [1]),
      new Tensor('num_input_tokens', Int32Array.of(inputTokens), [1]),
      new Tensor('num_output_tokens', Int32Array.of(outputTokens), [1]),
    ],
  });
}

export default class TritonPythonModel {
  async execute(requests: InferenceRequest[]): Promise<undefined> {
    for (const request of requests) {
      const sender = request.getResponseSender();
      try {
        const { prompt, answer } = promptOf(request);
        const stream = (getInputTensorByName(request, 'stream')?.data[0] ?? 1) !== 0;
        const limit = Number(getInputTensorByName(request, 'max_tokens')?.data[0] ?? answer.length);
        const generated = answer.slice(0, limit);
        const failAt = generated.indexOf('FAIL');
        if (!stream && failAt < 0) {
          sender.send(response(generated.join(' '), prompt.length, generated.length), TRITONSERVER_RESPONSE_COMPLETE_FINAL);
          continue;
        }
        for (let i = 0; i < generated.length; i++) {
          if (i === failAt) throw new TritonError(`the prompt asked to fail after ${i} words`, TritonError.INTERNAL);
          sender.send(response(i === 0 ? generated[i]! : ` ${generated[i]}`, i === 0 ? prompt.length : 0, 1));
        }
        if (generated.length === 0) sender.send(response('', prompt.length, 0));
        sender.send(undefined, TRITONSERVER_RESPONSE_COMPLETE_FINAL);
      } catch (e) {
        const error = e instanceof TritonError ? e : new TritonError(String(e), TritonError.INVALID_ARG);
        sender.send(new InferenceResponse({ outputTensors: [], error }), TRITONSERVER_RESPONSE_COMPLETE_FINAL);
      }
    }
    return undefined;
  }
}
