// Review of results: what a player is told of a result held for review or
// decided by a moderator, and every text of the review desk (desk.js). All of
// this feature's words are here, in one place, for the catalogs of languages.
// A result's `review` on the wire is null, or {status, reason}: status "held"
// (reason: why), "confirmed" or "disqualified" (reason: the moderator's note).

import { h } from './dom.js';

export const T = {
  // What players see.
  tag_held: 'under review',
  tag_confirmed: 'confirmed',
  tag_disqualified: 'disqualified',
  mine_held: 'Your result is under review: {reason}.',
  mine_held_next: 'A moderator will look at the game. If it is confirmed, it counts (leaderboard, streak, rating); if not, it is disqualified and you will see why here.',
  mine_confirmed: 'Your result was reviewed and confirmed: {reason}.',
  mine_disqualified: 'Your result was reviewed and disqualified: {reason}.',
  daily_held: ' — under review, off the leaderboard for now.',
  daily_disqualified: ' — disqualified after review.',
  daily_confirmed: ' — #{rank} of {total}, confirmed after review.',
  place_held: 'under review',
  place_disqualified: 'disqualified',
  // The review desk.
  desk_title: 'Review desk',
  desk_intro: 'Held results and the day’s top results, daily and of rated races, newest first. Read the replay and the signals, then confirm or disqualify with a short note: its player sees the note.',
  desk_day: 'Day',
  desk_show: 'Show',
  desk_filter_all: 'All',
  desk_filter_open: 'To decide',
  desk_loading: 'Loading the desk…',
  desk_refused: 'The review desk is for moderators.',
  desk_failed: 'The desk could not be loaded: {message}.',
  desk_none: 'Nothing to review on this day.',
  desk_daily: 'Daily',
  desk_race: 'Rated race',
  desk_won_in: 'won in {time}',
  desk_not_won: 'not won',
  desk_actions: '{count} moves',
  desk_rank: '#{rank}',
  desk_no_rank: 'off the leaderboard',
  desk_status_held: 'held',
  desk_status_counted: 'counted',
  desk_status_confirmed: 'confirmed',
  desk_status_disqualified: 'disqualified',
  desk_pace: 'Held because',
  desk_line: 'Line of play',
  desk_line_figures: '{on}/{decisions} decisions on a solver’s line ({share}%), longest run {run}, {undos} undos, {actions} moves (par {par})',
  desk_pauses: 'Pauses before hard/easy decisions: {hard}/{easy} ms',
  desk_line_held: 'Line limits passed',
  desk_unmeasured: 'no line measured',
  desk_replay: 'Replay and review',
  desk_record: 'Record as text',
  desk_open_race: 'Race page',
  desk_decided: '{status} by {by}, {when}: {note}',
  desk_note: 'Note for the player (required, at most 280 characters)',
  desk_confirm: 'Confirm',
  desk_disqualify: 'Disqualify',
  desk_reverse_confirm: 'Reverse: confirm',
  desk_reverse_disqualify: 'Reverse: disqualify',
  desk_sending: 'Sending…',
  desk_need_note: 'Write a note first.',
  desk_done: 'Decided: {status}.',
  desk_meanwhile: 'Another moderator decided meanwhile: {message}. The list is up to date again.',
  desk_audit: 'Audit log',
  desk_audit_none: 'No decision yet.',
  desk_audit_when: 'When',
  desk_audit_who: 'Who',
  desk_audit_what: 'What',
  desk_audit_why: 'Why',
  desk_audit_what_text: '{name}: {was} → {status}{reversed}',
  desk_audit_reversed: ' (reversal)',
  desk_nav: 'Desk',
};

// A string of T with its {placeholders} filled.
export function t(key, values = {}) {
  return T[key].replace(/\{(\w+)\}/g, (whole, name) => (name in values ? String(values[name]) : whole));
}

// A result's tag in a table of results (null for a result that simply counts).
export function reviewTag(review) {
  if (!review) return null;
  const status = ['held', 'confirmed', 'disqualified'].includes(review.status) ? review.status : 'held';
  return h('span', { class: `tag review-${status}${status === 'held' ? ' held' : ''}`, title: review.reason }, t(`tag_${status}`));
}

// What a player is told of their own result's review: lines of text.
export function reviewNote(review) {
  if (!review) return [];
  if (review.status === 'confirmed') return [t('mine_confirmed', { reason: review.reason })];
  if (review.status === 'disqualified') return [t('mine_disqualified', { reason: review.reason })];
  return [t('mine_held', { reason: review.reason }), t('mine_held_next')];
}
