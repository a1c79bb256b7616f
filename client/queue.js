// A quick race's queue, in its lobby: how many wait and when it starts (the
// server's `queue` message: one start time for everyone), a way out of the
// queue, and something to do while alone.

import { h, saveRaceCreds } from './dom.js';
import { play } from './feel.js';
import { t } from './i18n.js';

// The server's `queue` message: the players connected and the start time.
export function onQueue(view, msg) {
  view.clock(msg.now);
  view.queue = { waiting: msg.waiting, players: msg.players, start_by: msg.start_by };
  showQueue(view);
}

// `player_left`: a player left the lobby; they are out of the race.
export function onPlayerLeft(view, msg) {
  const gone = view.players.get(msg.player_id);
  view.players.delete(msg.player_id);
  if (msg.leaderboard) view.race.leaderboard = msg.leaderboard;
  if (msg.race_state) view.race.state = msg.race_state;
  if (gone && msg.player_id !== view.me) view.event(t('feed.left', { name: gone.name }));
  view.render();
}

// Seconds left to the start the server told (null: it waits for a second player).
function secondsLeft(view) {
  const queue = view.queue;
  if (!queue || !Number.isFinite(queue.start_by)) return null;
  return Math.max(0, Math.ceil((queue.start_by - view.serverNow()) / 1000));
}

export function queueText(view) {
  const quick = view.creds.quick || {};
  const queue = view.queue;
  const waiting = queue ? queue.waiting : view.players.size;
  const most = (queue && queue.players) || quick.players || 8;
  const count = t('queue.waiting', { count: waiting });
  const left = secondsLeft(view);
  if (left === null) return t('queue.alone', { waiting: count, seconds: quick.wait_s || 20, most });
  return left > 0 ? t('queue.starts_in', { waiting: count, seconds: left }) : t('queue.starting', { waiting: count });
}

function showQueue(view) {
  const el = view.root.querySelector('.quick-when');
  if (el) el.textContent = queueText(view);
  const side = view.root.querySelector('.queue-side');
  if (side) side.hidden = secondsLeft(view) !== null;
}

// The queue's block of the lobby: the count and countdown, Leave, and practice on the side.
export function queueBlock(view) {
  const alone = secondsLeft(view) === null;
  return h('div', { class: 'queue' },
    h('p', { class: 'quick-when', role: 'status' }, queueText(view)),
    view.role === 'player'
      ? h('p', { class: 'row' },
        h('button', { type: 'button', class: 'leave', onclick: () => leaveQueue(view) }, t('queue.leave')))
      : null,
    view.role === 'player'
      ? h('p', { class: 'queue-side small', hidden: !alone },
        t('queue.meanwhile'), ' ',
        h('a', { href: `/practice?cells=${view.race.cells || 4}`, target: '_blank', rel: 'noopener', class: 'button', onclick: () => callBack(view) }, t('queue.practise')))
      : null);
}

// Out of the queue: the server frees the place (the others' count drops), and home.
export function leaveQueue(view) {
  if (view.conn) view.conn.send({ type: 'leave' });
  saveRaceCreds(view.raceId, { token: null, quick: null });
  // The message leaves before the socket closes: the page changes on the next turn.
  setTimeout(() => view.navigate('/'), 50);
}

// Practising in another tab: when the race starts, this tab calls (its title
// and a sound), so the player comes back in time for the countdown.
function callBack(view) {
  if (view.callingBack) return;
  view.callingBack = setInterval(() => {
    if (view.destroyed || !view.root.isConnected) {
      clearInterval(view.callingBack);
      return;
    }
    if (!view.race || view.race.state === 'lobby') return;
    clearInterval(view.callingBack);
    if (!document.hidden) return;
    const title = document.title;
    document.title = `▶ ${t('queue.started')}`;
    play('event');
    document.addEventListener('visibilitychange', () => { document.title = title; }, { once: true });
  }, 500);
}
