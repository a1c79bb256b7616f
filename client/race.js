// The race page: join (or watch), lobby, countdown, play, standings and
// results, driven by the race WebSocket. Moves show at once and are rolled
// back when the server rejects them. Each `ack` moves my own copy of my game
// on; when its numbers disagree with my copy, a snapshot puts it right.

import { h, clear, patch, clock, ordinal, copyButton, toast, say, api, errorText, savedName, saveName, raceCreds, saveRaceCreds, playerKey, whoAmI } from './dom.js';
import { RaceConnection } from './net.js';
import { cascade, play } from './feel.js';
import { BoardView } from './board.js';
import * as R from './rules.js';
import { placeLine, progressEvent, renderMeBar, renderStandings } from './track.js';
import { resultsPanel } from './results.js';
import { onQueue, onPlayerLeft, queueBlock, queueText } from './queue.js';
import { StartOverlay, turnUp } from './start.js';
import { t, tn, day } from './i18n.js';

const CONN_TEXT = {
  connecting: 'conn.connecting',
  connected: 'conn.connected',
  reconnecting: 'conn.reconnecting',
  offline: 'conn.offline',
  closed: 'conn.closed',
};
const JOIN_ERRORS = new Set(['bad_name', 'name_taken', 'name_reserved', 'bad_token', 'race_full', 'already_started', 'not_host']);
const HISTORY_LIMIT = 100;
const FINISH_STEP_MS = 120;
const FEED_LENGTH = 8;
const FOLLOW_AFTER_MS = 2500; // my own win stays in sight this long
const REMATCH_FOLLOW_S = 5;

export function setConnectionIndicator(state) {
  const el = document.getElementById('conn');
  if (!el) return;
  el.hidden = !state;
  if (!state) return;
  el.dataset.state = state === 'connecting' ? 'reconnecting' : state;
  const text = CONN_TEXT[state] ? t(CONN_TEXT[state]) : state;
  el.title = text;
  el.replaceChildren(h('span', { class: 'conn-text' }, text));
}

export class RaceView {
  constructor(root, raceId, { watch = false, navigate }) {
    this.root = root;
    this.raceId = raceId;
    this.watchOnly = watch;
    this.navigate = navigate;
    this.creds = raceCreds(raceId);
    this.race = null; // the race snapshot, kept current from events
    this.players = new Map(); // player_id -> standing
    this.role = null; // 'player' | 'spectator'
    this.me = null; // my player_id
    this.confirmed = null; // my game as the server last said
    this.predictions = []; // my actions not yet answered: {id, kind, move}
    this.history = []; // moves I may undo: {src, dst, count, card, points}
    this.watching = null; // player_id whose board I follow
    this.watchedGame = null;
    this.skew = 0; // server clock minus ours
    this.raceOverReason = null;
    this.autoStarted = false;
    this.startSent = false;
    this.rematchSent = false;
    this.hint = null;
    // The resign button's first click arms it; kept here, not on the button, so
    // that a re-render between the two clicks (a rival's progress) keeps it armed.
    this.resignArm = new Arm(() => this.resign(), () => this.render());
    this.conn = null;
    this.frame = 0;
    this.feed = []; // the event feed, newest first
    this.ghost = null; // a recorded rival (ghost.js, loaded for a ghost's game only)
    if (this.creds.ghost) {
      import('./ghost.js').then(({ Ghost }) => {
        if (this.destroyed) return;
        this.ghost = new Ghost(this.creds.ghost);
        this.render();
      });
    }
    this.boardView = new BoardView({
      move: (src, dst, count) => this.sendMove(src, dst, count),
      tap: (card) => this.sendTap('tap', card),
      doubleTap: (card) => this.sendTap('double_tap', card),
      undo: () => this.sendUndo(),
      hint: () => this.askHint(),
      illegal: (reason, target) => this.showReason(reason, null, target),
      flush: () => { if (this.frame) this.renderNow(); },
    });
    this.startOverlay = new StartOverlay(this);
    this.spectate = null; // a fair race's spectator screen (spectate.js), once needed
    this.onKey = (e) => this.key(e);
    document.addEventListener('keydown', this.onKey);
    this.ticker = setInterval(() => this.tick(), 250);
    // For tests and the curious: the live page state.
    window.boulanger = this;
  }

  destroy() {
    this.destroyed = true;
    clearInterval(this.finishing);
    clearInterval(this.rematchTimer);
    cancelAnimationFrame(this.frame);
    clearTimeout(this.startTimeout);
    clearInterval(this.ticker);
    this.resignArm.disarm();
    document.removeEventListener('keydown', this.onKey);
    this.boardView.destroy();
    this.startOverlay.destroy();
    if (this.spectate) this.spectate.destroy();
    if (this.ghost) this.ghost.destroy();
    if (this.conn) this.conn.destroy();
    setConnectionIndicator(null);
    if (window.boulanger === this) window.boulanger = null;
  }

  // -- joining --------------------------------------------------------------

  async mount() {
    clear(this.root, h('p', { class: 'loading' }, t('loading.race')));
    let info = null;
    try {
      info = await api('GET', `/api/races/${encodeURIComponent(this.raceId)}`);
    } catch (error) {
      if (this.destroyed) return;
      if (error.status === 404) {
        this.fatal(t('race.none'), t('race.none_about'));
        return;
      }
    }
    if (this.destroyed) return;
    if (info) this.adoptRace(info);
    if (this.watchOnly) return this.connect({ role: 'spectator' });
    if (this.creds.token) return this.connect({ role: 'player', token: this.creds.token });
    // A race over (a profile's past race) opens on its results, not on a join form.
    if (info && info.state === 'finished') return this.connect({ role: 'spectator' });
    // The host (or a rematch's or a quick race's player) joins at once, as their account if signed in.
    const name = this.creds.host_key || this.creds.rematch_of || this.creds.quick ? ((await whoAmI()) || {}).name || savedName() : '';
    if (this.destroyed) return;
    if (name) this.connect({ role: 'player', name, host_key: this.creds.host_key || null });
    else this.showJoinForm(info);
  }

  showJoinForm(info, problem) {
    if (this.account === undefined) {
      // Signed in, one plays as one's account: no name to ask.
      whoAmI().then((account) => {
        this.account = account;
        if (!this.destroyed) this.showJoinForm(info, problem);
      });
      return;
    }
    const account = this.account;
    const started = info && info.state && info.state !== 'lobby';
    const closed = info && info.state === 'full'
      ? t('join.full')
      : t('join.started');
    const name = h('input', { id: 'join-name', name: 'name', maxlength: 24, autocomplete: 'nickname', required: true, value: savedName() });
    const form = h('form', { class: 'panel join' },
      h('h1', {}, t('join.title')),
      info ? h('p', {}, [info.code ? t('join.code', { code: info.code }) : t('join.secret_deal'), cellsText(info.cells), t('join.players', { count: (info.players || []).length, most: 8 })].join(' · ')) : null,
      problem ? h('p', { class: 'problem', role: 'alert' }, problem) : null,
      started
        ? h('p', {}, closed)
        : account
          ? h('p', { class: 'playing-as' }, tn('name.playing_as', { name: h('strong', {}, account.name) }), ' ', h('button', { type: 'submit', class: 'primary' }, t('join.join')))
          : h('p', {}, h('label', { for: 'join-name' }, t('name.label'), ' '), name, ' ', h('button', { type: 'submit', class: 'primary' }, t('join.join'))),
      h('p', {}, h('button', { type: 'button', class: started ? 'primary' : '', onclick: () => this.startWatching() }, t('join.watch_instead'))));
    form.addEventListener('submit', (e) => {
      e.preventDefault();
      const value = account ? account.name : name.value.trim();
      if (!value) {
        name.focus();
        return;
      }
      if (!account) saveName(value);
      this.connect({ role: 'player', name: value, host_key: this.creds.host_key || null });
    });
    clear(this.root, form);
    if (!started) (account ? form.querySelector('button[type=submit]') : name).focus();
  }

  startWatching() {
    history.replaceState(null, '', `/race/${encodeURIComponent(this.raceId)}?watch=1`);
    this.watchOnly = true;
    this.connect({ role: 'spectator' });
  }

  connect(fields) {
    this.joinName = fields.name || null;
    if (this.conn) this.conn.destroy();
    this.conn = new RaceConnection(this.raceId, {
      message: (msg) => this.handle(msg),
      state: (state, detail) => this.connectionState(state, detail),
    });
    window.boulangerSocket = this.conn;
    if (!this.race) clear(this.root, h('p', { class: 'loading' }, t('conn.connecting')));
    this.conn.start({ type: 'join', role: 'player', name: null, host_key: null, token: null, ...fields });
  }

  connectionState(state, detail) {
    setConnectionIndicator(state);
    if (detail === 'no_race') this.fatal(t('race.none'), t('race.unknown_about'));
    if (detail === 'replaced') {
      // Input here would be queued and sent on "Play here", long after the
      // other tab moved on: this tab shows the game but takes no input.
      this.replaced = true;
      this.predictions = [];
      this.render();
      this.notice(t('race.replaced'), t('race.play_here'), () => {
        this.replaced = false;
        this.history = [];
        this.conn.start(this.conn.joinMessage);
      });
    }
  }

  fatal(title, text) {
    if (this.conn) this.conn.stop();
    setConnectionIndicator(null);
    clear(this.root, h('div', { class: 'panel' }, h('h1', {}, title), h('p', {}, text), h('p', {}, h('a', { href: '/', class: 'button primary' }, t('common.home')))));
  }

  notice(text, action, run) {
    const box = this.root.querySelector('.notice');
    const el = h('div', { class: 'notice', role: 'alert' }, text, ' ', h('button', { type: 'button', onclick: () => { el.remove(); run(); } }, action));
    if (box) box.replaceWith(el);
    else this.root.prepend(el);
  }

  // -- server messages ------------------------------------------------------

  handle(msg) {
    if (this.spectate && this.spectate.handle(msg)) return undefined;
    switch (msg.type) {
      case 'welcome': return this.onWelcome(msg);
      case 'snapshot': return this.onSnapshot(msg);
      case 'player_joined':
        if (msg.player && !this.players.has(msg.player.player_id) && msg.player.player_id !== this.me) this.event(t('feed.joined', { name: msg.player.name }));
        this.setPlayer(msg.player);
        this.race.state = msg.race_state || this.race.state;
        return this.render();
      case 'queue': return onQueue(this, msg);
      case 'player_left': return onPlayerLeft(this, msg);
      case 'race_starting':
        Object.assign(this.race, { state: msg.race_state || 'countdown', start_at: msg.start_at, ends_at: msg.ends_at });
        // The deal arrives now: a secret one was in no snapshot. Today's daily
        // code stays off the page (it is secret until the day ends).
        if (msg.code && !this.daily()) this.race.code = msg.code;
        if (msg.game && this.role === 'player' && !this.confirmed) this.setGame(msg.game);
        this.clock(msg.now);
        this.startTimer();
        this.event(this.solo() ? t('feed.game_starts') : t('feed.race_starts'));
        return this.render();
      case 'progress':
        if (msg.player) progressEvent(this, this.players.get(msg.player.player_id), msg.player);
        if (msg.player) this.judged(msg.player);
        this.setPlayer(msg.player);
        if (msg.leaderboard) this.race.leaderboard = msg.leaderboard;
        if (msg.race_state) this.race.state = msg.race_state;
        return this.render();
      case 'race_over':
        this.race.state = 'finished';
        this.raceOverReason = msg.reason;
        for (const standing of msg.standings || []) this.setPlayer(standing);
        this.race.leaderboard = (msg.standings || []).map((s) => s.player_id);
        this.event(msg.reason === 'time_limit' ? t('feed.time_up') : t('feed.over'), true);
        return this.render();
      case 'rematch':
        this.race.rematch = { race_id: msg.race_id, code: msg.code || null, url: msg.url };
        this.rematchCreds(msg.race_id);
        this.onRematch();
        return this.render();
      case 'ack': return this.onAck(msg);
      case 'reject': return this.onReject(msg);
      case 'board':
        if (msg.player_id === this.watching) {
          this.watchedGame = msg.game;
          this.render();
        }
        return undefined;
      case 'hint_result': return this.onHint(msg);
      case 'error': return this.onError(msg);
      default: return undefined;
    }
  }

  // -- the race as it happens: events, place, gap, following the leader ------

  // A line in the event feed (the last few are kept); `loud` ones are also
  // said to screen readers, with a sound (none: the caller has its own).
  event(text, loud = false, sound = 'event') {
    this.feed.unshift({ text, at: this.serverNow() });
    this.feed.length = Math.min(this.feed.length, FEED_LENGTH);
    if (loud) {
      say(text);
      if (sound) play(sound);
    }
  }



  placeLine() {
    return placeLine(this);
  }

  myCards() {
    if (this.role === 'player' && this.confirmed) return this.view().foundation_cards;
    const me = this.players.get(this.me);
    return me ? me.foundation_cards : 0;
  }

  // Once I am done (or as a spectator who chose no one) the board follows
  // the leader among those still playing, where their boards are shown (a
  // race with open boards).
  followLeader() {
    if (this.watchPicked || this.watchRefused || !this.race || this.race.state === 'finished') return;
    if (!this.mayWatchPlaying(this.phase())) return;
    const following = this.role === 'spectator' || (this.done() && this.serverNow() - (this.doneAt || 0) > FOLLOW_AFTER_MS);
    if (!following) return;
    const leader = this.ordered().find((p) => p.status === 'playing' && p.player_id !== this.me);
    if (leader && leader.player_id !== this.watching) this.watch(leader.player_id, false);
  }

  // The host's rematch takes everyone along: the host goes at once, players
  // follow in a few seconds unless they say no, spectators get the link.
  onRematch() {
    const rematch = this.race.rematch;
    if (!rematch || this.rematchTimer || this.rematchDeclined) return;
    const url = rematch.url || `/race/${rematch.race_id}`;
    if (this.isHost()) {
      this.navigate(url);
      return;
    }
    if (this.role !== 'player' || this.daily()) return;
    const host = this.players.get(this.race.host_id);
    this.event(host ? t('feed.rematch', { name: host.name }) : t('feed.rematch_host'), true);
    this.rematchLeft = REMATCH_FOLLOW_S;
    this.rematchTimer = setInterval(() => {
      this.rematchLeft -= 1;
      if (this.rematchLeft <= 0) {
        clearInterval(this.rematchTimer);
        this.navigate(url);
        return;
      }
      const left = this.root.querySelector('[data-rematch-left]');
      if (left) left.textContent = String(this.rematchLeft);
    }, 1000);
  }

  async anotherQuickRace() {
    try {
      const { quickRace } = await import('./app.js');
      await quickRace(this.creds.quick.cells || this.race.cells);
    } catch (error) {
      toast(t('home.quick_failed', { reason: error.message }), 'error');
    }
  }

  declineRematch() {
    clearInterval(this.rematchTimer);
    this.rematchDeclined = true;
    this.render();
  }

  onWelcome(msg) {
    this.role = msg.role;
    this.adoptRace(msg.race);
    if (msg.role === 'player') {
      this.me = msg.player_id;
      if (msg.token) {
        this.creds = saveRaceCreds(this.raceId, { token: msg.token, player_id: msg.player_id });
        this.conn.rejoinAs({ role: 'player', token: msg.token });
      }
      // An action sent before the connection dropped may be in this game
      // already: drawn on top of it, it would count (or move) twice. It
      // shows again when its answer comes, right after this welcome.
      for (const p of this.predictions) if (this.conn.wentOut(p.id)) p.inDoubt = true;
      this.setGame(msg.game);
    } else {
      this.conn.rejoinAs({ role: 'spectator' });
    }
    if (this.watching) this.conn.send({ type: 'watch', player_id: this.watching });
    this.render();
    this.maybeAutoStart();
  }

  onSnapshot(msg) {
    this.adoptRace(msg.race);
    if (msg.game) this.setGame(msg.game);
    this.render();
  }

  adoptRace(race) {
    this.race = { ...race };
    this.players = new Map((race.players || []).map((p) => [p.player_id, p]));
    if (race.rematch) this.rematchCreds(race.rematch.race_id);
    if (Number.isFinite(race.now)) this.clock(race.now);
    this.startTimer();
  }

  // The rematch keeps the host key, so the host stays the host; a player of
  // this race who follows the link joins it under the same name at once.
  rematchCreds(raceId) {
    if (this.role !== 'player' && !this.creds.host_key) return;
    saveRaceCreds(raceId, { host_key: this.creds.host_key || null, rematch_of: this.raceId });
  }

  // A game from a welcome or snapshot: what we know of our moves may be stale.
  setGame(game) {
    if (!game) return;
    this.repairing = false;
    if (!this.confirmed || this.confirmed.actions !== game.actions) this.history = [];
    this.confirmed = game;
  }

  setPlayer(standing) {
    if (!standing) return;
    this.players.set(standing.player_id, { ...this.players.get(standing.player_id), ...standing });
  }

  clock(serverNow) {
    if (Number.isFinite(serverNow)) this.skew = serverNow - Date.now();
  }

  // Show the board the moment the race starts (the ticker alone could be 250 ms late).
  startTimer() {
    clearTimeout(this.startTimeout);
    const race = this.race;
    if (race.state !== 'countdown' || !Number.isFinite(race.start_at)) return;
    this.startTimeout = setTimeout(() => this.render(), Math.max(0, race.start_at - this.serverNow()) + 5);
  }

  serverNow() {
    return Date.now() + this.skew;
  }

  async maybeAutoStart() {
    const race = this.race;
    if ((race.practice || this.creds.autostart) && race.state === 'lobby' && this.isHost() && !this.autoStarted) {
      this.autoStarted = true;
      // A first game in practice (never a daily): the guide comes first, and
      // the clock starts when it is closed.
      if (race.practice && !this.daily() && await this.guideFirst()) return;
      this.conn.send({ type: 'start' });
    }
  }

  // The first-game guide, shown before the start; whether it is.
  async guideFirst() {
    const { guideDone, firstGameGuide } = await import('./guide.js');
    if (guideDone() || this.destroyed) return false;
    this.guide = firstGameGuide(() => {
      this.guide = null;
      if (!this.destroyed) this.conn.send({ type: 'start' });
    });
    this.render();
    return true;
  }

  isHost() {
    return this.role === 'player' && this.me !== null && this.race && this.race.host_id === this.me;
  }

  // An ack carries the move and my game's numbers after it: I make the move on
  // my copy (docs/protocol.md, "ack"). One already in my copy (a resent
  // action's, after a welcome) has `actions` not above mine.
  onAck(msg) {
    const at = this.predictions.findIndex((p) => p.id === msg.action_id);
    const prediction = at >= 0 ? this.predictions.splice(at, 1)[0] : null;
    const kind = prediction ? prediction.kind : null;
    const game = this.confirmed;
    const { move, card } = msg;
    if (!game || this.repairing) {
      // a snapshot is on its way
    } else if (!move) {
      this.confirmed = { ...game, status: msg.status }; // resigned
    } else if (msg.actions > game.actions) {
      // An undo takes back a move; a move never lowers the undo count.
      const undo = kind ? kind === 'undo' : msg.can_undo < game.can_undo;
      const board = msg.actions === game.actions + 1 ? acked(game.board, msg, undo) : null;
      if (!board || R.foundationCards(board) !== msg.foundation_cards) return this.repair();
      const { score, actions, foundation_cards, status, can_undo } = msg;
      this.confirmed = { board, score, actions, foundation_cards, status, can_undo };
      if (undo) this.history.pop();
      else {
        this.history.push({ ...move, card, points: R.movePoints(move.src, move.dst) });
        if (this.history.length > HISTORY_LIMIT) this.history.shift();
        if (kind === 'tap' || kind === 'double_tap') this.announce(move, card);
      }
    }
    this.hint = null;
    this.render();
  }

  // Whether my position is stuck or a dead end is judged once I pause, and
  // comes as my standing's status (an ack says only won or playing).
  judged(standing) {
    const game = this.confirmed;
    if (standing.player_id !== this.me || !game || standing.actions !== game.actions) return;
    if (game.status === 'won' || game.status === 'resigned' || standing.status === 'resigned') return;
    this.confirmed = { ...game, status: standing.status };
  }

  // My copy of my game went wrong: ask for the truth (a negative last_seq
  // is answered with a snapshot, always).
  repair() {
    this.repairing = true;
    this.repairs = (this.repairs || 0) + 1;
    this.conn.send({ type: 'resync', last_seq: -1 });
    this.render();
  }

  onReject(msg) {
    const refused = this.predictions.find((p) => p.id === msg.action_id);
    this.predictions = this.predictions.filter((p) => p !== refused);
    const target = refused && (refused.card || (refused.move && refused.move.src));
    this.showReason(msg.reason, msg.code, target);
    this.render();
  }

  onError(msg) {
    if (!this.conn.joined && JOIN_ERRORS.has(msg.code)) {
      this.conn.stop();
      setConnectionIndicator(null);
      if (msg.code === 'bad_token') {
        this.creds = saveRaceCreds(this.raceId, { token: null, player_id: null });
        this.showJoinForm(this.race, t('join.token_gone'));
      } else if (msg.code === 'already_started' || msg.code === 'race_full') {
        const info = { ...(this.race || {}), state: msg.code === 'race_full' ? 'full' : 'running' };
        this.showJoinForm(info, errorText(msg.code, msg.reason));
      } else {
        // A name refused: the name itself, then why.
        const named = ['bad_name', 'name_taken', 'name_reserved'].includes(msg.code) && this.joinName;
        const problem = errorText(msg.code, msg.reason);
        this.showJoinForm(this.race, named ? t('join.name_problem', { name: this.joinName, problem }) : problem);
      }
      return;
    }
    // A refused start or rematch may be asked for again.
    this.startSent = false;
    this.rematchSent = false;
    this.render();
    const watchRefused = ['unknown_player', 'boards_hidden', 'watch_refused', 'not_yet', 'spectator'].includes(msg.code) && this.watching;
    if (watchRefused) {
      // A board that is not shown (yet): the track still follows everyone.
      this.watching = null;
      this.watchedGame = null;
      if (!this.watchPicked) {
        this.watchRefused = true;
        return;
      }
    }
    toast(errorText(msg.code, msg.reason), 'error');
  }

  onHint(msg) {
    if (msg.result === 'won' && msg.move) {
      this.hint = msg.move;
      const m = msg.move;
      const card = this.confirmed && R.movingCards(this.view().board, m.src, m.count)[0];
      const to = R.targetLabel(m.dst);
      const text = !card ? t('hint.some', { to }) : m.count > 1 ? t('hint.cards', { count: m.count, card: R.cardText(card), to }) : t('hint.card', { card: R.cardText(card), to });
      this.boardView.note(card || m.src, text);
    } else if (msg.result === 'unsolvable') {
      toast(t('hint.unsolvable'), 'error');
    } else {
      toast(t('hint.unknown'));
    }
    this.render();
  }

  // -- my actions -------------------------------------------------------------

  canPlay() {
    if (this.replaced || this.role !== 'player' || !this.confirmed || !this.race) return false;
    if (!this.running()) return false;
    const me = this.players.get(this.me);
    return !(me && (me.status === 'won' || me.status === 'resigned'));
  }

  // Whether I have won or resigned (players may then watch the others).
  done() {
    const me = this.role === 'player' && this.players.get(this.me);
    return Boolean(me && (me.status === 'won' || me.status === 'resigned'));
  }

  running() {
    const race = this.race;
    if (!race) return false;
    if (race.state === 'running') return true;
    return race.state === 'countdown' && Number.isFinite(race.start_at) && this.serverNow() >= race.start_at;
  }

  act(kind, fields, move = null) {
    this.playedHere = true;
    const id = this.conn.act({ type: kind, ...fields });
    if (!id) return null;
    this.predictions.push({ id, kind, move, card: null });
    this.hint = null;
    this.render();
    return id;
  }

  sendMove(src, dst, count) {
    if (!this.canPlay()) return;
    const move = { src, dst, count };
    const card = R.movingCards(this.view().board, src, count)[0];
    if (this.act('move', move, move) && card) this.announce(move, card);
  }

  sendTap(kind, card) {
    if (!this.canPlay()) return;
    const board = this.view().board;
    const move = kind === 'tap' ? R.tapMove(board, card) : R.doubleTapMove(board, card);
    if (!move) {
      if (kind === 'double_tap') this.boardView.refuse(card, t('move.nowhere', { card: R.cardText(card) }));
      return;
    }
    this.act(kind, { card }, move);
  }

  sendUndo() {
    if (!this.canPlay()) return;
    const view = this.view();
    if (!view.can_undo) {
      toast(t('error.nothing_to_undo'), 'error');
      return;
    }
    this.act('undo', {});
  }

  resign() {
    if (this.role !== 'player' || !this.running()) return;
    this.act('resign', {});
  }

  askHint() {
    if (this.race && this.race.practice && this.canPlay()) this.conn.send({ type: 'hint' });
  }

  start() {
    if (this.startSent) return;
    this.startSent = this.conn.send({ type: 'start' });
    this.render();
  }

  rematch() {
    if (this.rematchSent) return;
    this.rematchSent = this.conn.send({ type: 'rematch' });
    this.render();
  }

  watch(playerId, picked = true) {
    if (picked) this.watchPicked = true;
    this.watching = playerId;
    this.watchedGame = null;
    this.conn.send({ type: 'watch', player_id: playerId });
    this.render();
  }

  // My game as shown: the confirmed game plus the actions still in flight.
  view() {
    const game = this.confirmed;
    let board = game.board;
    let score = game.score;
    let canUndo = game.can_undo;
    const stack = this.history.slice();
    let status = game.status;
    for (const p of this.predictions) {
      if (p.inDoubt) continue;
      if (p.kind === 'resign') {
        status = 'resigned';
      } else if (p.kind === 'undo') {
        const last = stack.pop();
        if (!last || !undoable(board, last)) break; // not sure what undo takes back: wait for the ack
        board = R.unapplyMove(board, last, last.card);
        score = Math.max(0, score - last.points);
        canUndo = Math.max(0, canUndo - 1);
        status = 'playing';
      } else if (p.move && R.isLegal(board, p.move.src, p.move.dst, p.move.count)) {
        const { src, dst, count } = p.move;
        p.card = R.movingCards(board, src, count)[0];
        board = R.applyMove(board, src, dst, count);
        const points = R.movePoints(src, dst);
        score += points;
        canUndo = Math.min(HISTORY_LIMIT, canUndo + 1);
        stack.push({ src, dst, count, card: p.card, points });
        status = 'playing';
      }
    }
    return {
      board,
      score,
      can_undo: canUndo,
      status,
      foundation_cards: R.foundationCards(board),
      actions: game.actions + this.predictions.filter((p) => !p.inDoubt).length,
    };
  }

  // Why something was refused, in plain words next to the card it concerns
  // (a toast when no board is in sight).
  showReason(reason, code, target) {
    const text = !code || code === 'illegal_move' ? R.plainReason(reason) : errorText(code, reason);
    if (target && !this.boardView.el.hidden && this.boardView.el.isConnected) this.boardView.refuse(target, text);
    else toast(text, 'error');
    if (code === 'race_over' || code === 'finished') this.render();
  }

  // Tell a screen reader what moved, naming the card.
  announce(move, card) {
    const to = R.targetLabel(move.dst);
    say(move.count > 1 ? t('said.cards', { count: move.count, card: R.cardName(card), to }) : t('said.card', { card: R.cardName(card), to }));
  }

  key(e) {
    const target = e.target;
    if (target && (target.tagName === 'INPUT' || target.tagName === 'TEXTAREA' || target.isContentEditable)) return;
    if (this.frame) this.renderNow(); // the board must show the latest state
    if (this.boardView.key(e)) e.preventDefault();
  }

  // -- drawing ------------------------------------------------------------------

  phase() {
    const state = this.race && this.race.state;
    if (state === 'finished') return 'finished';
    if (this.running()) return 'running';
    if (state === 'countdown') return 'countdown';
    return 'lobby';
  }

  // Many messages can arrive in one frame (an ack and its progress event):
  // draw once per frame.
  render() {
    if (!this.frame) this.frame = requestAnimationFrame(() => this.renderNow());
  }

  renderNow() {
    cancelAnimationFrame(this.frame);
    this.frame = 0;
    if (!this.race || !this.role) return;
    let page = this.root.querySelector('.race-page');
    if (!page) {
      page = h('div', { class: 'race-page' },
        h('div', { class: 'race-head' }),
        h('div', { class: 'me-bar', hidden: true }),
        h('div', { class: 'race-main' },
          h('section', { class: 'play', 'aria-label': t('race.game_label') },
            h('div', { class: 'stats' }), h('div', { class: 'banner-area' }), h('div', { class: 'panel-area' }), h('div', { class: 'guide-area' }), h('div', { class: 'board-area' })),
          h('aside', { class: 'standings', 'aria-label': t('race.players_label') })));
      clear(this.root, page);
      page.querySelector('.board-area').append(this.boardView.el, keysHelp());
    }
    const phase = this.phase();
    page.dataset.phase = phase;
    page.dataset.role = this.role;
    this.renderHead(page.querySelector('.race-head'), phase);
    this.renderStats(page.querySelector('.stats'), phase);
    this.renderBanner(page.querySelector('.banner-area'), phase);
    this.renderPanel(page.querySelector('.panel-area'), phase);
    this.renderBoard(page.querySelector('.board-area'), phase);
    renderStandings(this, page.querySelector('.standings'), phase);
    // My place shows from the countdown on, so that the board stays put at Go.
    renderMeBar(this, page.querySelector('.me-bar'), phase === 'countdown' ? 'running' : phase);
    this.startOverlay.update(page);
    this.spectateHook(page, phase);
    if (this.ghost) this.ghost.attach(this, page);
    // The guide stays while it is read, and goes with the game.
    if (this.guide && !this.guide.isConnected && phase === 'lobby') page.querySelector('.guide-area').append(this.guide);
    if (this.guide && phase !== 'lobby') this.guide.remove();
  }

  // A spectator of a race with hidden boards gets a screen of the race
  // itself in the main area (spectate.js, loaded then).
  spectateHook(page, phase) {
    const wanted = this.role === 'spectator' && !this.race.open_boards && (phase === 'countdown' || phase === 'running');
    page.toggleAttribute('data-spectate', wanted);
    if (this.spectate) this.spectate.render(page, wanted);
    else if (wanted && !this.spectateLoading) {
      this.spectateLoading = true;
      import('./spectate.js').then(({ SpectateView }) => {
        if (this.destroyed) return;
        this.spectate = new SpectateView(this);
        this.render();
      });
    }
  }

  // Leaving a game still on asks first (the game goes on without you).
  leaving() {
    if (!this.canPlay() || this.solo()) return null;
    return t('race.leaving');
  }


  renderHead(el, phase) {
    const race = this.race;
    const phaseText = t({ lobby: 'phase.lobby', countdown: 'phase.countdown', running: 'phase.running', finished: 'phase.finished' }[phase]);
    patch(el,
      h('h1', {}, this.creds.daily ? tn('race.daily_title', { date: h('span', { class: 'date' }, day(this.creds.daily)) }) : race.practice ? t('title.practice') : t('title.race')),
      this.creds.daily ? h('span', { class: 'badge' }, this.creds.ranked ? t('race.ranked') : t('race.unranked')) : null,
      // A deal the server picked stays secret until the start (code null in
      // the lobby); today's daily code, until the day ends.
      race.code ? h('span', { class: 'code', title: t('race.code_title') }, race.code)
        : this.daily() ? null : h('span', { class: 'meta' }, t('race.deal_at_start')),
      race.open_boards ? h('span', { class: 'tag open-boards', title: t('race.open_boards_title') }, t('race.open_boards')) : null,
      h('span', { class: 'meta' }, `${cellsText(race.cells)} · ${phaseText}`),
      race.par ? h('span', { class: 'meta' }, t('race.par', { par: race.par }), info(t('race.par_word'), t('race.par_about', { count: race.par }))) : null,
      h('span', { class: 'meta ends', 'data-ends': '' }),
      this.role === 'spectator' ? h('span', { class: 'badge' }, t('race.spectator')) : null);
  }

  renderStats(el, phase) {
    if (this.role !== 'player' || !this.confirmed || phase === 'lobby') {
      clear(el);
      el.hidden = true;
      return;
    }
    el.hidden = false;
    const view = this.view();
    const me = this.players.get(this.me);
    const playing = this.canPlay();
    // Every card left can go up in order: the player may ask for all of it.
    const finish = playing && !this.finishing && R.finishMoves(view.board);
    patch(el,
      finish ? h('button', { type: 'button', class: 'primary finish', onclick: () => this.finish() }, t('race.finish', { count: finish.length })) : null,
      stat(t('stat.score'), view.score, 'score', t('stat.score_about')),
      stat(t('stat.time'), this.myTime(), 'time'),
      stat(t('stat.foundations'), `${view.foundation_cards}/52`, 'foundations'),
      stat(t('stat.moves'), view.actions, 'actions'),
      h('span', { class: 'actions' },
        h('button', { type: 'button', class: 'undo', disabled: !playing || !view.can_undo, onclick: () => this.sendUndo(), title: t('race.undo_title') }, '↶ ', t('race.undo')),
        this.race.practice ? h('button', { type: 'button', class: 'hint', disabled: !playing, onclick: () => this.askHint(), title: t('race.hint_title') }, t('race.hint')) : null,
        playing || phase === 'countdown' ? resignButton(this.resignArm, !playing) : null),
      me && me.rank && !this.solo() ? h('span', { class: 'rank' }, t('race.place', { place: ordinal(me.rank) })) : null);
  }

  // Send the finishing moves one by one, each checked by the server like any
  // move (the rules' "no automatic moves" holds: the player asked). Paced so
  // that they stay well inside the message budget and are seen going up.
  finish() {
    if (this.finishing) return;
    this.finishing = setInterval(() => {
      if (this.destroyed || !this.canPlay()) {
        this.stopFinishing();
        return;
      }
      if (this.predictions.length > 1) return;
      const moves = R.finishMoves(this.view().board);
      if (!moves) {
        this.stopFinishing();
        return;
      }
      this.sendMove(moves[0].src, moves[0].dst, 1);
    }, FINISH_STEP_MS);
    this.render();
  }

  stopFinishing() {
    clearInterval(this.finishing);
    this.finishing = 0;
    this.render();
  }

  // The win, once, as it happens (not on a reload of a game won before).
  celebrate() {
    if (this.celebrated) return;
    this.celebrated = true;
    play('win');
    requestAnimationFrame(() => {
      const places = this.boardView.places;
      if (places) cascade(places.foundationSlots.map((slot) => slot.querySelector('.card')).filter(Boolean));
    });
  }

  myTime() {
    const me = this.players.get(this.me);
    if (me && Number.isFinite(me.time_ms)) return clock(me.time_ms);
    if (me && (me.status === 'resigned' || this.race.state === 'finished')) return clock(me.elapsed_ms || 0);
    if (!this.running()) return clock(0);
    return clock(this.serverNow() - this.race.start_at);
  }

  renderBanner(el, phase) {
    if (this.role !== 'player' || !this.confirmed || phase === 'lobby' || phase === 'countdown') {
      clear(el);
      return;
    }
    const view = this.view();
    const me = this.players.get(this.me);
    let status = this.predictions.length ? view.status : this.confirmed.status;
    if (me && me.status === 'resigned') status = 'resigned';
    const buttons = [];
    let text = null;
    if (status === 'won') {
      if (this.playedHere) this.celebrate();
      const placed = me && me.rank && !this.solo();
      text = !(me && me.time_ms) ? t('banner.won')
        : placed ? t('banner.won_place', { time: clock(me.time_ms), place: ordinal(me.rank), count: this.players.size })
          : t('banner.won_time', { time: clock(me.time_ms) });
    } else if (status === 'resigned') {
      text = t('banner.resigned');
    } else if (status === 'stuck' || status === 'dead_end') {
      text = status === 'stuck' ? t('banner.stuck') : t('banner.dead_end');
      if (phase === 'running') {
        buttons.push(h('button', { type: 'button', disabled: !view.can_undo, onclick: () => this.sendUndo() }, '↶ ', t('race.undo')));
        buttons.push(resignButton(this.resignArm));
      }
    }
    patch(el, text ? h('div', { class: `banner status-${status}`, role: 'status' }, text, ' ', buttons) : null);
  }

  renderPanel(el, phase) {
    patch(el,
      this.rematchNotice(phase),
      phase === 'lobby' ? (this.guide ? null : this.lobbyPanel())
        : phase === 'finished' ? this.resultsPanel() : null);
  }

  rematchNotice(phase) {
    if (this.race.rematch && phase === 'finished') {
      const base = this.race.rematch.url || `/race/${this.race.rematch.race_id}`;
      const url = this.role === 'spectator' ? `${base}?watch=1` : base;
      const following = this.rematchTimer && !this.rematchDeclined && this.role === 'player';
      return h('div', { class: 'notice rematch', role: 'status', 'data-key': 'rematch' },
        following
          ? h('span', {}, tn('rematch.following', { seconds: h('span', { 'data-rematch-left': '' }, String(this.rematchLeft)) }), ' ')
          : [t('rematch.open'), ' '],
        h('a', { href: url, class: 'button primary', 'data-link': '' }, this.role === 'spectator' ? t('rematch.watch') : following ? t('rematch.join_now') : t('rematch.go')),
        following ? h('button', { type: 'button', class: 'decline', onclick: () => this.declineRematch() }, t('rematch.decline')) : null);
    }
    return null;
  }

  lobbyPanel() {
    const link = `${location.origin}/race/${this.raceId}`;
    const watchLink = `${link}?watch=1`;
    const count = this.players.size;
    const panel = h('div', { class: 'panel lobby' },
      h('h2', {}, this.race.practice || this.creds.daily ? t('lobby.about_to_start') : t('lobby.waiting')),
      this.race.practice || this.creds.daily ? null : h('div', { class: 'share' },
        h('label', { for: 'share-link' }, t('lobby.send_link')),
        h('div', { class: 'row' }, h('input', { id: 'share-link', readonly: true, value: link, onfocus: (e) => e.target.select() }), copyButton(() => link, t('lobby.copy_link'))),
        h('p', { class: 'small' }, tn('lobby.spectators', { link: h('a', { href: watchLink }, t('lobby.watch_link')) }), ' ', copyButton(() => watchLink))),
      this.race.practice || this.creds.daily ? null : h('p', { class: 'small fair-play' }, this.race.open_boards
        ? t('lobby.open_boards')
        : t('lobby.fair_play')),
      this.creds.quick ? null : h('p', {}, t('lobby.count', { count, most: 8 })),
      this.race.winnable === false
        ? h('p', { class: 'notice', role: 'note' }, t('lobby.no_win'))
        : null);
    const quick = this.creds.quick;
    if (quick) {
      // Nobody hosts a quick race: the server starts it (queue.js).
      panel.insertBefore(queueBlock(this), panel.children[1]);
    } else if (this.isHost() && this.creds.autostart) {
      panel.appendChild(h('p', {}, t('lobby.starting')));
    } else if (this.isHost()) {
      panel.appendChild(h('p', {}, h('button', { type: 'button', class: 'primary start', disabled: this.startSent, onclick: () => this.start() }, this.startSent ? t('lobby.starting') : t('lobby.start'))));
    } else if (this.role === 'player') {
      panel.appendChild(h('p', {}, t('lobby.host_starts')));
    }
    return panel;
  }

  quickText() {
    return queueText(this);
  }

  resultsPanel() {
    return resultsPanel(this);
  }

  // A race of one (practice, a daily attempt) has a result, not a place.
  solo() {
    return Boolean(this.race && (this.race.practice || this.daily() || this.players.size === 1));
  }

  daily() {
    return (this.race && this.race.daily) || this.creds.daily || null;
  }

  // The place of the day of a ranked daily attempt, once the server recorded it.
  loadDailyPlace() {
    const date = this.daily();
    if (!date || this.role !== 'player' || this.dailyPlace || this.dailyAsked >= 20) return;
    if (this.dailyTimer) return;
    this.dailyAsked = (this.dailyAsked || 0) + 1;
    this.dailyTimer = setTimeout(async () => {
      try {
        const me = await api('GET', `/api/daily/${date}/me`, undefined, { 'X-Player-Key': playerKey() });
        if (!me.attempt || me.attempt.race_id !== this.raceId) this.dailyAsked = 99; // a practice game
        else if (me.rank) this.dailyPlace = { rank: me.rank, total: me.total, streak: me.streak };
      } catch {
        // The result panel works without it.
      }
      this.dailyTimer = 0;
      if (this.destroyed) return;
      if (this.dailyPlace) this.render();
      else this.loadDailyPlace();
    }, this.dailyAsked === 1 ? 0 : 500);
  }



  renderBoard(el, phase) {
    if (this.role === 'spectator' || ((phase === 'finished' || this.done()) && this.watching && this.watching !== this.me)) {
      el.hidden = false;
      const watched = this.watching && this.players.get(this.watching);
      let caption = el.querySelector('.watch-caption');
      if (!caption) {
        caption = h('p', { class: 'watch-caption' });
        el.prepend(caption);
      }
      patch(caption, watched
        ? t(this.watchedGame ? 'watch.watching' : 'watch.loading', { name: watched.name })
        : this.mayWatchPlaying(phase) ? t('watch.choose')
          : t('watch.hidden'),
      watched && this.role === 'player' ? [' ', h('button', { type: 'button', onclick: () => { this.watch(null); } }, t('watch.back'))] : null);
      this.boardView.el.hidden = !this.watchedGame;
      if (this.watchedGame) this.boardView.update(this.watchedGame.board, { interactive: false, highlight: null });
      return;
    }
    el.querySelector('.watch-caption')?.remove();
    // During the countdown the deal lies face down where it will be played:
    // nothing moves at Go but the cards turning up.
    const visible = this.role === 'player' && this.confirmed && phase !== 'lobby';
    el.hidden = !visible;
    this.boardView.el.hidden = !visible;
    if (visible) this.boardView.update(this.view().board, { interactive: this.canPlay(), highlight: this.hint });
    const down = visible && phase === 'countdown';
    if (!down && this.boardView.el.classList.contains('face-down')) turnUp(this.boardView.el);
    this.boardView.el.classList.toggle('face-down', down);
    this.boardView.el.inert = down;
  }

  ordered() {
    const order = (this.race.leaderboard || []).filter((id) => this.players.has(id));
    for (const id of this.players.keys()) if (!order.includes(id)) order.push(id);
    return order.map((id) => this.players.get(id));
  }

  // Whether I may watch the boards of players still playing: spectators (and
  // finished players) of a race with open boards once the deal is dealt, and
  // everyone once it is over (docs/protocol.md, "Boards").
  mayWatchPlaying(phase) {
    if (phase === 'finished') return true;
    return (this.role === 'spectator' || this.done()) && Boolean(this.race.open_boards) && phase !== 'lobby';
  }

  tick() {
    if (!this.race || !this.role) return;
    this.followLeader();
    const page = this.root.querySelector('.race-page');
    if (!page) return;
    const phase = this.phase();
    if (page.dataset.phase !== phase) {
      this.render();
      return;
    }
    // Four ticks a second, one change a second: text set only when it differs
    // spares the page a layout at every tick (a phone's battery).
    const time = page.querySelector('[data-stat="time"] .value');
    if (time) setText(time, this.myTime());
    const quickWhen = page.querySelector('.quick-when');
    if (quickWhen) setText(quickWhen, this.quickText());
    const ends = page.querySelector('[data-ends]');
    if (ends) {
      const left = (this.race.ends_at || 0) - this.serverNow();
      setText(ends, phase === 'running' && this.race.ends_at && left < 10 * 60000 ? t('race.ends_in', { time: clock(left) }) : '');
    }
  }
}

function setText(el, text) {
  if (el.textContent !== text) el.textContent = text;
}

function keysHelp() {
  return h('details', { class: 'keys-help' },
    h('summary', {}, t('keys.title')),
    h('ul', {},
      h('li', {}, t('keys.drag')),
      h('li', {}, t('keys.keys')),
      h('li', {}, t('keys.twice')),
      h('li', {}, t('keys.undo'))));
}



function stat(label, value, key, about) {
  return h('span', { class: 'stat', 'data-stat': key }, h('span', { class: 'label' }, label), ' ', h('span', { class: 'value' }, String(value)), about ? info(label, about) : null);
}

// A small "?" that shows what a word on the screen means (par, score).
// (Which are open is kept here: the head and the stats are drawn again often.)
const OPEN_INFO = new Set();

export function info(label, text) {
  const shown = OPEN_INFO.has(label);
  const box = h('span', { class: 'info-text', hidden: !shown, role: 'note' }, text);
  // The elements clicked, not those made here: patch() may keep older ones.
  const button = h('button', { type: 'button', class: 'info', 'aria-expanded': String(shown), 'aria-label': t('info.what', { word: label.toLowerCase() }), onclick: (e) => {
    const shown = e.currentTarget;
    const text = shown.nextElementSibling;
    const open = text.hidden;
    text.hidden = !open;
    shown.setAttribute('aria-expanded', String(open));
    if (open) OPEN_INFO.add(label);
    else OPEN_INFO.delete(label);
  } }, '?');
  return h('span', { class: 'info-wrap' }, button, box);
}

function resignButton(arm, disabled = false) {
  const armed = arm.armed();
  return h('button', { type: 'button', class: armed ? 'resign armed' : 'resign', disabled, onclick: () => arm.click() }, armed ? t('race.resign_really') : t('race.resign'));
}

// A two-click confirmation: the first click arms for three seconds, the
// second runs. Rendering asks armed(); every change of state redraws.
// (A test on a slow machine may lengthen the window: arming.ms.)
export const arming = { ms: 3000 };

class Arm {
  constructor(run, redraw) {
    this.run = run;
    this.redraw = redraw;
    this.timer = 0;
  }

  armed() {
    return this.timer !== 0;
  }

  click() {
    if (this.armed()) {
      this.disarm();
      this.run();
      this.redraw();
      return;
    }
    this.timer = setTimeout(() => {
      this.timer = 0;
      this.redraw();
    }, arming.ms);
    this.redraw();
  }

  disarm() {
    clearTimeout(this.timer);
    this.timer = 0;
  }
}

export function cellsText(cells) {
  return t('cells.count', { count: cells });
}

// My board after an acknowledged action, or null when the ack does not fit it.
function acked(board, ack, undo) {
  const m = ack.move;
  if (undo) {
    const last = { ...m, card: ack.card };
    return undoable(board, last) ? R.unapplyMove(board, last, ack.card) : null;
  }
  if (!R.isLegal(board, m.src, m.dst, m.count) || R.movingCards(board, m.src, m.count)[0] !== ack.card) return null;
  return R.applyMove(board, m.src, m.dst, m.count);
}

// Whether an undo of `move` fits the board (else our history is stale).
function undoable(board, move) {
  if (move.dst === 'foundation') return (board.foundations[R.suitOf(move.card)] || 0) === R.rankOf(move.card);
  const to = R.parsePlace(move.dst);
  if (to.kind === 'cell') return board.cells[to.index] === move.card;
  const col = board.columns[to.index];
  return col.length >= move.count && col[col.length - move.count] === move.card;
}
