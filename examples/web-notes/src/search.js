// The search box: every typed word must start a word of the note's title or body, in any case.
import { Query } from 'appwrite';

const MAX_WORDS = 8;

/** The words of ``text``, lower-cased (letters, digits, underscore: the server’s \w). */
export function searchWords(text) {
  return (text.toLowerCase().match(/[\p{L}\p{N}_]+/gu) || []).slice(0, MAX_WORDS);
}

/** One query per word: ``search`` on the title or the body (each needs its fulltext index;
 * setup.py creates them). The list's queries are ANDed, so every word must match. */
export function searchQueries(text) {
  return searchWords(text).map((word) => Query.or([Query.search('title', word), Query.search('body', word)]));
}

/** Whether ``row`` matches ``text`` as the server's search does on PostgreSQL (a word matches
 * the start of a word); used for rows that arrive by realtime or are created on this page. */
export function matchesSearch(row, text) {
  const words = searchWords(`${row.title || ''} ${row.body || ''}`);
  return searchWords(text).every((w) => words.some((word) => word.startsWith(w)));
}
