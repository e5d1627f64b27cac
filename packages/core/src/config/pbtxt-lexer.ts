/**
 * Tokenizer for protobuf text format, after protobuf's io::Tokenizer as TextFormat configures it:
 * `#` comments, identifiers, integers (decimal, `0x` hex, leading-`0` octal), floats (`1.5`, `1e-3`,
 * `.5`, `1.5f`), single- or double-quoted strings with C escapes, and one-character symbols.
 * A minus sign is its own symbol; the parser folds it into the number that follows.
 */

export type TokenType = 'ident' | 'int' | 'float' | 'string' | 'symbol' | 'eof';

export interface Token {
  readonly type: TokenType;
  /** Source text (for strings: including the quotes). */
  readonly text: string;
  /** For strings: the unescaped value. */
  readonly value: string;
  /** 1-based position of the token's first character. */
  readonly line: number;
  readonly column: number;
}

/** A lexical error at a position; the parser turns it into a ConfigError. */
export class LexError extends Error {
  constructor(
    message: string,
    readonly line: number,
    readonly column: number,
  ) {
    super(message);
  }
}

const enum Ch {
  Tab = 9,
  Newline = 10,
  VTab = 11,
  FormFeed = 12,
  Return = 13,
  Space = 32,
  DoubleQuote = 34,
  Hash = 35,
  SingleQuote = 39,
  Dot = 46,
  Zero = 48,
  Seven = 55,
  Nine = 57,
  UpperA = 65,
  UpperE = 69,
  UpperF = 70,
  UpperX = 88,
  UpperZ = 90,
  Backslash = 92,
  Underscore = 95,
  LowerA = 97,
  LowerE = 101,
  LowerF = 102,
  LowerX = 120,
  LowerZ = 122,
  Plus = 43,
  Minus = 45,
}

function isDigit(c: number): boolean {
  return c >= Ch.Zero && c <= Ch.Nine;
}
function isHexDigit(c: number): boolean {
  return isDigit(c) || (c >= Ch.UpperA && c <= Ch.UpperF) || (c >= Ch.LowerA && c <= Ch.LowerF);
}
function isLetter(c: number): boolean {
  return (c >= Ch.UpperA && c <= Ch.UpperZ) || (c >= Ch.LowerA && c <= Ch.LowerZ) || c === Ch.Underscore;
}
function isIdentChar(c: number): boolean {
  return isLetter(c) || isDigit(c);
}

/** The one-character escapes (`\n`, `\t`, ..., `\"`) and the byte each stands for. */
const SIMPLE_ESCAPES: ReadonlyMap<string, number> = new Map([
  ['n', 10],
  ['t', 9],
  ['r', 13],
  ['a', 7],
  ['b', 8],
  ['f', 12],
  ['v', 11],
  ['\\', 92],
  ['"', 34],
  ["'", 39],
  ['?', 63],
]);

const utf8 = new TextEncoder();
const utf8Decoder = new TextDecoder('utf-8');

export class Lexer {
  private pos = 0;
  private line = 1;
  private lineStart = 0;
  private lookahead: Token | undefined;

  constructor(private readonly src: string) {}

  peek(): Token {
    if (!this.lookahead) this.lookahead = this.read();
    return this.lookahead;
  }

  next(): Token {
    const t = this.peek();
    this.lookahead = undefined;
    return t;
  }

  private error(message: string, pos: number = this.pos): never {
    throw new LexError(message, this.line, pos - this.lineStart + 1);
  }

  private skipSpaceAndComments(): void {
    const src = this.src;
    for (;;) {
      const c = src.charCodeAt(this.pos);
      if (c === Ch.Newline) {
        this.pos++;
        this.line++;
        this.lineStart = this.pos;
      } else if (c === Ch.Space || c === Ch.Tab || c === Ch.Return || c === Ch.VTab || c === Ch.FormFeed) {
        this.pos++;
      } else if (c === Ch.Hash) {
        const end = src.indexOf('\n', this.pos);
        this.pos = end < 0 ? src.length : end;
      } else {
        return;
      }
    }
  }

  private read(): Token {
    this.skipSpaceAndComments();
    const src = this.src;
    const start = this.pos;
    const line = this.line;
    const column = start - this.lineStart + 1;
    if (start >= src.length) return { type: 'eof', text: '', value: '', line, column };
    const c = src.charCodeAt(start);

    if (isLetter(c)) {
      let p = start + 1;
      while (p < src.length && isIdentChar(src.charCodeAt(p))) p++;
      this.pos = p;
      const text = src.slice(start, p);
      return { type: 'ident', text, value: text, line, column };
    }
    if (isDigit(c) || (c === Ch.Dot && isDigit(src.charCodeAt(start + 1)))) {
      return this.readNumber(start, line, column);
    }
    if (c === Ch.DoubleQuote || c === Ch.SingleQuote) {
      return this.readString(start, c, line, column);
    }
    this.pos = start + 1;
    const text = src[start]!;
    return { type: 'symbol', text, value: text, line, column };
  }

  private readNumber(start: number, line: number, column: number): Token {
    const src = this.src;
    let p = start;
    let isFloat = false;
    const c0 = src.charCodeAt(p);
    const c1 = src.charCodeAt(p + 1);
    if (c0 === Ch.Zero && (c1 === Ch.LowerX || c1 === Ch.UpperX)) {
      p += 2;
      if (!isHexDigit(src.charCodeAt(p))) this.error('"0x" must be followed by hex digits.', p);
      while (isHexDigit(src.charCodeAt(p))) p++;
    } else if (c0 === Ch.Zero && isDigit(c1)) {
      // Octal: every digit must be 0-7.
      p++;
      while (isDigit(src.charCodeAt(p))) {
        if (src.charCodeAt(p) > Ch.Seven) this.error('Numbers starting with leading zero must be in octal.', p);
        p++;
      }
    } else {
      while (isDigit(src.charCodeAt(p))) p++;
      if (src.charCodeAt(p) === Ch.Dot) {
        isFloat = true;
        p++;
        while (isDigit(src.charCodeAt(p))) p++;
      }
      const e = src.charCodeAt(p);
      if (e === Ch.LowerE || e === Ch.UpperE) {
        isFloat = true;
        p++;
        const sign = src.charCodeAt(p);
        if (sign === Ch.Plus || sign === Ch.Minus) p++;
        if (!isDigit(src.charCodeAt(p))) this.error('"e" must be followed by exponent.', p);
        while (isDigit(src.charCodeAt(p))) p++;
      }
      const f = src.charCodeAt(p);
      if (f === Ch.LowerF || f === Ch.UpperF) {
        isFloat = true;
        p++;
      }
    }
    if (p < src.length && (isLetter(src.charCodeAt(p)) || src.charCodeAt(p) === Ch.Dot)) {
      this.error('Need space between number and identifier.', p);
    }
    this.pos = p;
    const text = src.slice(start, p);
    return { type: isFloat ? 'float' : 'int', text, value: text, line, column };
  }

  private readString(start: number, quote: number, line: number, column: number): Token {
    const src = this.src;
    let p = start + 1;
    let hasEscape = false;
    for (;;) {
      if (p >= src.length) this.error('Unexpected end of string.', start);
      const c = src.charCodeAt(p);
      if (c === Ch.Newline) this.error('String literals cannot cross line boundaries.', p);
      if (c === Ch.Backslash) {
        hasEscape = true;
        p += 2;
        continue;
      }
      if (c === quote) break;
      p++;
    }
    this.pos = p + 1;
    const text = src.slice(start, p + 1);
    const body = src.slice(start + 1, p);
    const value = hasEscape ? this.unescape(body, start + 1) : body;
    return { type: 'string', text, value, line, column };
  }

  /** C-style unescaping; \x and octal escapes are bytes, so the result is decoded as UTF-8. */
  private unescape(body: string, bodyStart: number): string {
    const bytes: number[] = [];
    const pushText = (s: string): void => {
      for (const b of utf8.encode(s)) bytes.push(b);
    };
    let i = 0;
    while (i < body.length) {
      const ch = body[i]!;
      if (ch !== '\\') {
        const cp = body.codePointAt(i)!;
        if (cp < 0x80) bytes.push(cp);
        else pushText(String.fromCodePoint(cp));
        i += cp > 0xffff ? 2 : 1;
        continue;
      }
      const e = body[i + 1];
      i += 2;
      const simple = e === undefined ? undefined : SIMPLE_ESCAPES.get(e);
      if (simple !== undefined) {
        bytes.push(simple);
        continue;
      }
      switch (e) {
        case 'x': {
          // Lowercase only, as protobuf's tokenizer: `\X41` is an invalid escape there.
          let j = i;
          while (j < body.length && j < i + 2 && isHexDigit(body.charCodeAt(j))) j++;
          if (j === i) this.error('Expected hex digits for escape sequence.', bodyStart + i - 2);
          bytes.push(parseInt(body.slice(i, j), 16));
          i = j;
          break;
        }
        case 'u':
        case 'U': {
          const n = e === 'u' ? 4 : 8;
          const hex = body.slice(i, i + n);
          let cp = /^[0-9a-fA-F]+$/.test(hex) && hex.length === n ? parseInt(hex, 16) : -1;
          if (e === 'u' && cp < 0) this.error('Expected four hex digits for \\u escape sequence.', bodyStart + i - 2);
          if (e === 'U' && (cp < 0 || cp > 0x10ffff)) {
            this.error('Expected eight hex digits up to 10ffff for \\U escape sequence', bodyStart + i - 2);
          }
          i += n;
          // protobuf's FetchUnicodePoint: a UTF-16 head surrogate followed by a `\u` trail surrogate is
          // one code point. A lone surrogate is accepted there too; here it becomes U+FFFD.
          const trail = cp >= 0xd800 && cp <= 0xdbff && body.startsWith('\\u', i) ? body.slice(i + 2, i + 6) : '';
          if (/^[dD][c-fC-F][0-9a-fA-F]{2}$/.test(trail)) {
            cp = 0x10000 + ((cp - 0xd800) << 10) + (parseInt(trail, 16) - 0xdc00);
            i += 6;
          }
          pushText(String.fromCodePoint(cp));
          break;
        }
        default: {
          if (e !== undefined && e >= '0' && e <= '7') {
            let j = i - 1;
            const end = Math.min(body.length, j + 3);
            while (j < end && body[j]! >= '0' && body[j]! <= '7') j++;
            bytes.push(parseInt(body.slice(i - 1, j), 8) & 0xff);
            i = j;
            break;
          }
          this.error('Invalid escape sequence in string literal.', bodyStart + i - 2);
        }
      }
    }
    return utf8Decoder.decode(new Uint8Array(bytes));
  }
}
