/**
 * Word matching. A tweet's text is lower-cased and split into words (letters, digits, marks,
 * underscores, inner apostrophes; each emoji is a word of its own). A bare query word matches
 * by stem; `+word` and phrase words match the lower-cased word exactly.
 *
 * Stemming is deliberately light and only ever removes trailing characters, so a stem is always
 * a prefix of the word it came from: `lower(text).includes(stem)` is then a sound pre-check that
 * skips tokenising most tweets of a scan.
 */
import type { TweetTable } from '../model.ts';

const WORD = /[\p{L}\p{N}\p{M}_'’]+|\p{Extended_Pictographic}/gu;
const SIBILANT_ES = /(?:s|x|z|ch|sh)es$/u;
const VOWELS = 'aeiouy';

/** Lower-cased words of a text, in order. */
export function wordsOf(text: string): string[] {
  const words: string[] = [];
  for (const match of text.toLowerCase().matchAll(WORD)) {
    const word = trimApostrophes(match[0].replaceAll('’', "'"));
    if (word !== '') words.push(word);
  }
  return words;
}

function trimApostrophes(word: string): string {
  let start = 0;
  let end = word.length;
  while (start < end && word[start] === "'") start += 1;
  while (end > start && word[end - 1] === "'") end -= 1;
  return word.slice(start, end);
}

/**
 * Light English stemming: possessive 's; then one of -ing, -ed, -es (after a sibilant), -s;
 * then a final e; then a doubled final consonant. "likes", "liked", "liking" and "like" all
 * become "lik"; "running" and "runs" become "run". Words of three letters or fewer stay as
 * they are.
 */
export function stem(word: string): string {
  let w = word.endsWith("'s") ? word.slice(0, -2) : word;
  if (w.length > 5 && w.endsWith('ing')) w = w.slice(0, -3);
  else if (w.length > 4 && w.endsWith('ed')) w = w.slice(0, -2);
  else if (w.length > 4 && SIBILANT_ES.test(w)) w = w.slice(0, -2);
  else if (w.length > 3 && w.endsWith('s') && !/(?:ss|us|is)$/u.test(w)) w = w.slice(0, -1);
  if (w.length > 3 && w.endsWith('e')) w = w.slice(0, -1);
  const last = w[w.length - 1];
  if (w.length > 2 && last !== undefined && last === w[w.length - 2] && !VOWELS.includes(last) && /[a-z]/u.test(last)) {
    w = w.slice(0, -1);
  }
  return w;
}

/**
 * Memo of one tweet's lower-cased text, words and stems, shared by every text term of a
 * compiled query so a tweet is tokenised at most once per evaluation.
 */
export class TweetTextMemo {
  readonly #tweets: TweetTable;
  #index = -1;
  #lower = '';
  #words: string[] | null = null;
  #stems: Set<string> | null = null;

  constructor(tweets: TweetTable) {
    this.#tweets = tweets;
  }

  lower(i: number): string {
    if (i !== this.#index) {
      this.#index = i;
      this.#lower = this.#tweets.text(i).toLowerCase();
      this.#words = null;
      this.#stems = null;
    }
    return this.#lower;
  }

  words(i: number): string[] {
    const lower = this.lower(i);
    this.#words ??= wordsOf(lower);
    return this.#words;
  }

  stems(i: number): Set<string> {
    if (this.#stems === null || i !== this.#index) {
      this.#stems = new Set(this.words(i).map(stem));
    }
    return this.#stems;
  }
}
