// Review of results: what a player is told of a result held for review or
// decided by a moderator. A result's `review` on the wire is null, or
// {status, reason}: status "held" (reason: why), "confirmed" or
// "disqualified" (reason: the moderator's note). The words are the
// catalogs' (results.held*, daily.mine_*, verdict.*; the desk's are desk.*).

import { h, heldText } from './dom.js';
import { t } from './i18n.js';

// A result's mark in a table of results (null for a result that simply counts).
export function reviewTag(review) {
  if (!review) return null;
  if (review.status === 'confirmed') return h('span', { class: 'tag review-confirmed', title: review.reason }, t('verdict.confirmed_tag'));
  if (review.status === 'disqualified') return h('span', { class: 'tag review-disqualified', title: review.reason }, t('verdict.disqualified_tag'));
  return h('span', { class: 'tag held review-held', title: heldText(review.reason) }, t('results.held_tag'));
}

// What a player is told of their own result's review: lines of text (held: why,
// and what happens next; decided: the decision and its note).
export function reviewNote(review, why = 'results.held') {
  if (!review) return [];
  if (review.status === 'confirmed') return [t('verdict.mine_confirmed', { reason: review.reason })];
  if (review.status === 'disqualified') return [t('verdict.mine_disqualified', { reason: review.reason })];
  return [t(why, { reason: heldText(review.reason) }), t('verdict.next')];
}

// Where my daily entry stands: its place, or its review.
export function dailyPlace(entry, rank, total) {
  const review = entry.review;
  if (review && review.status === 'disqualified') return t('daily.mine_disqualified');
  if (review && review.status === 'confirmed' && rank) return t('daily.mine_confirmed', { rank, total });
  if (review || !rank) return t('daily.mine_held');
  return t('daily.mine_place', { rank, count: total });
}
