// The daily challenge page: the day's deal, my result and streak, a ranked
// first attempt (then practice), and the day's leaderboard, live.

import { h, clear, clock, toast, api, savedName, saveName, raceCreds, saveRaceCreds, playerKey, ghostLink, whoAmI, playingAs } from './dom.js';
import { setConnectionIndicator } from './race.js';
import { t, tn, day as dayText, relative } from './i18n.js';
import { reviewNote, dailyPlace } from './review.js';
import { FIRST_DAY, shareText, sharePanel } from './share.js';

function shiftDay(date, days) {
  const d = new Date(`${date}T00:00:00Z`);
  d.setUTCDate(d.getUTCDate() + days);
  return d.toISOString().slice(0, 10);
}

const RESULT_KEYS = { won: 'status.won', resigned: 'status.resigned', time_limit: 'daily.time_up' };
const resultText = (result) => (RESULT_KEYS[result] ? t(RESULT_KEYS[result]) : result);

export class DailyPage {
  constructor(root, date, navigate) {
    this.root = root;
    this.date = date || null;
    this.navigate = navigate;
    this.day = null;
    this.me = null;
    this.board = h('div', { class: 'daily-board' }, h('p', { class: 'small' }, t('loading.leaderboard')));
    this.timer = 0;
    this.ws = null;
    this.retry = 0;
    this.destroyed = false;
  }

  destroy() {
    this.destroyed = true;
    clearInterval(this.timer);
    clearTimeout(this.retry);
    if (this.ws) this.ws.close(1000);
    setConnectionIndicator(null);
  }

  async mount() {
    clear(this.root, h('p', { class: 'loading' }, t('loading.daily')));
    try {
      this.day = await api('GET', this.date ? `/api/daily/${encodeURIComponent(this.date)}` : '/api/daily');
    } catch (error) {
      if (!this.destroyed) this.unavailable(error);
      return;
    }
    if (this.destroyed) return;
    // Today's code stays secret until the day ends: a day with a code is over.
    this.today = this.day.code === null;
    try {
      this.me = await api('GET', `/api/daily/${this.day.date}/me`, undefined, { 'X-Player-Key': playerKey() });
    } catch {
      this.me = null; // the page works without it
    }
    this.account = await whoAmI();
    if (this.destroyed) return;
    this.render();
    this.loadBoard();
    this.live();
  }

  unavailable(error) {
    let text;
    if (error.status === 404 && !this.date) text = t('daily.none_yet');
    else if (error.status === 404) text = t('daily.none_that_day');
    else if (error.status === 400) text = t('daily.not_a_day', { date: this.date });
    else text = t('daily.cannot_load', { reason: error.message });
    clear(this.root, h('div', { class: 'panel' },
      h('h1', {}, t('title.daily')),
      h('p', {}, text),
      h('p', { class: 'row' },
        this.date ? h('a', { href: '/daily', class: 'button primary', 'data-link': '' }, t('daily.today')) : null,
        h('a', { href: '/practice', class: 'button', 'data-link': '' }, t('home.practise')),
        h('a', { href: '/', class: 'button', 'data-link': '' }, t('common.home')))));
  }

  render() {
    const day = this.day;
    const me = this.me;
    // A guest's game is unranked unless this server ranks guests.
    this.canRank = !me || !!me.signed_in || !!me.guests_ranked;
    const ranked = this.today && this.canRank && !(me && (me.entry || me.attempt));
    // The ranked game under way was started in another browser: this one can
    // neither continue it nor start a practice game until it is over.
    this.elsewhere = Boolean(this.today && me && !me.entry && me.attempt && !ownAttempt(me.attempt.race_id));
    const account = this.account;
    const name = account
      ? h('input', { id: 'daily-name', type: 'hidden', value: account.name })
      : h('input', { id: 'daily-name', maxlength: 24, autocomplete: 'nickname', value: savedName(), placeholder: t('daily.name_placeholder') });
    const play = h('button', { type: 'submit', class: 'primary' }, ranked ? t('home.daily_play') : this.today && !this.canRank ? t('daily.play_unranked') : t('daily.play_again'));
    const form = h('form', { class: 'row daily-play', hidden: this.elsewhere }, account ? playingAs(account) : h('label', { for: 'daily-name' }, t('name.label')), name, play);
    form.addEventListener('submit', (e) => {
      e.preventDefault();
      this.play(name, play);
    });
    this.mineEl = h('div', { class: 'mine' });
    this.renderMine();
    const next = h('span', { class: 'small', 'data-next': '' });
    const prev = day.date > FIRST_DAY ? h('a', { href: `/daily/${shiftDay(day.date, -1)}`, 'data-link': '' }, `← ${t('daily.previous')}`) : null;
    const later = this.today ? null : h('a', { href: '/daily', 'data-link': '' }, `${t('daily.today_link')} →`);
    const ago = this.today ? null : Math.round((Date.parse(new Date().toISOString().slice(0, 10)) - Date.parse(day.date)) / 86400000);
    clear(this.root, h('div', { class: 'panel daily' },
      // The date is one piece: never broken over two lines.
      h('h1', {}, tn('daily.title', { date: h('span', { class: 'date' }, dayText(day.date)) })),
      ago > 0 ? h('p', { class: 'small when' }, relative(-ago, 'day')) : null,
      day.code
        ? h('p', {}, tn('daily.code', { code: h('span', { class: 'code' }, day.code) }), day.par ? ` · ${t('race.par', { par: day.par })}` : '', ` · ${t('cells.count', { count: 4 })}`)
        : h('p', {}, t('daily.secret'), day.par ? ` ${t('daily.par', { par: day.par })}` : '', ` · ${t('cells.count', { count: 4 })}.`),
      this.mineEl,
      form,
      this.today ? h('p', {}, next) : null,
      h('p', { class: 'row small' }, prev, later),
      this.ghostOffer(),
      h('h2', {}, t('standings.leaderboard')),
      this.board));
    clearInterval(this.timer);
    const tick = () => {
      if (Number.isFinite(day.next_at)) next.textContent = t('daily.next', { time: clock(day.next_at - Date.now()) });
    };
    tick();
    this.timer = setInterval(tick, 1000);
  }

  // A ghost to race: yesterday's winner on today's page, the day's winner on a
  // past day's (records are public once their day is over).
  ghostOffer() {
    const el = h('p', { class: 'row ghost-offer', hidden: true });
    const over = !this.today;
    const day = over ? this.day.date : shiftDay(this.day.date, -1);
    if (day < FIRST_DAY) return el;
    api('GET', `/api/daily/${day}/leaderboard?limit=1`).then((page) => {
      const top = page.entries && page.entries[0];
      if (!top || this.destroyed) return;
      const path = `/api/daily/${day}/records/${top.entry_id}`;
      const time = top.result === 'won' ? ` (${clock(top.time_ms)})` : '';
      clear(el,
        h('a', { href: ghostLink(path, top.name), class: 'button race-ghost', 'data-link': '' },
          t(over ? 'daily.ghost_day' : 'daily.ghost_yesterday', { name: top.name }) + time),
        h('a', { href: `/daily/${day}/replay/${top.entry_id}`, 'data-link': '' }, t('results.watch_replay')));
      el.hidden = false;
    }).catch(() => {});
    return el;
  }

  // My result of the day: its place moves as others finish.
  renderMine() {
    const me = this.me;
    const mine = [];
    if (me && me.entry) {
      const entry = me.entry;
      mine.push(h('p', { class: 'my-result' },
        entry.result === 'won' ? t('daily.mine_won', { time: clock(entry.time_ms) }) : t('daily.mine_cards', { result: resultText(entry.result), cards: entry.foundation_cards }),
        ' — ',
        dailyPlace(entry, me.rank, me.total),
        me.streak > 1 ? ` ${t('daily.streak', { count: me.streak })}` : ''));
      for (const line of reviewNote(entry.review, 'daily.why')) mine.push(h('p', { class: `held small review-${entry.review.status}` }, line));
      if (me.share) {
        mine.push(sharePanel(this.shareText(entry, me), 'daily-share', t('daily.share')));
      }
    } else if (me && me.attempt && this.elsewhere) {
      mine.push(h('p', { class: 'my-result elsewhere' }, t('daily.elsewhere')));
    } else if (me && me.attempt) {
      mine.push(h('p', { class: 'my-result' }, t('daily.under_way'), ' ',
        h('a', { href: me.attempt.url, class: 'button primary', 'data-link': '' }, t('daily.continue'))));
    } else if (this.today && !this.canRank) {
      mine.push(h('p', { class: 'unranked' }, tn('daily.guest', { link: h('a', { href: '/account', 'data-link': '' }, t('daily.guest_link')) })));
    } else if (this.today) {
      mine.push(h('p', { class: 'small' }, t('daily.first_counts')));
    } else {
      mine.push(h('p', { class: 'small' }, t('daily.past')));
    }
    clear(this.mineEl, mine);
  }

  // The text to paste elsewhere (share.js writes it, as for a race's results):
  // no code, no move, a link to the day's page only.
  shareText(entry, me) {
    const status = entry.review && entry.review.status;
    return shareText({
      date: this.day.date,
      won: entry.result === 'won',
      place: me.rank,
      total: me.total,
      review: status === 'held' || status === 'disqualified' ? status : me.rank ? null : 'held',
      time_ms: entry.time_ms,
      cards: entry.foundation_cards,
      moves: entry.actions,
      par: this.day.par,
      streak: me.streak,
      origin: location.origin,
    });
  }

  // Ask the server for my place again (once at a time: the live table can move fast).
  async refreshMe() {
    if (!this.me || !this.me.entry) return;
    if (this.asking) {
      this.askAgain = true;
      return;
    }
    this.asking = true;
    try {
      const me = await api('GET', `/api/daily/${this.day.date}/me`, undefined, { 'X-Player-Key': playerKey() });
      if (!this.destroyed && (me.rank !== this.me.rank || me.total !== this.me.total)) {
        this.me = me;
        this.renderMine();
      }
    } catch {
      // Kept as it was; the next table asks again.
    }
    this.asking = false;
    if (this.askAgain && !this.destroyed) {
      this.askAgain = false;
      this.refreshMe();
    }
  }

  async play(nameInput, button) {
    const name = nameInput.value.trim();
    if (!name) {
      nameInput.focus();
      toast(t('name.missing'), 'error');
      return;
    }
    if (!this.account) saveName(name);
    button.disabled = true;
    try {
      const attempt = await api('POST', `/api/daily/${this.day.date}/attempts`, { player_key: playerKey(), name });
      saveRaceCreds(attempt.race_id, { host_key: attempt.host_key, autostart: true, daily: attempt.date, ranked: attempt.ranked });
      this.navigate(attempt.url || `/race/${attempt.race_id}`);
    } catch (error) {
      toast(t('daily.start_failed', { reason: error.message }), 'error', 6000);
      button.disabled = false;
    }
  }

  async loadBoard() {
    try {
      const page = await api('GET', `/api/daily/${this.day.date}/leaderboard?limit=50&offset=0`);
      if (!this.destroyed) this.showBoard(page.entries || [], page.total);
    } catch (error) {
      if (!this.destroyed) clear(this.board, h('p', { class: 'small' }, t('daily.board_failed', { reason: error.message })));
    }
  }

  showBoard(entries, total) {
    if (!entries.length) {
      clear(this.board, h('p', { class: 'small' }, this.today ? t('daily.no_results_today') : t('daily.no_results')));
      return;
    }
    clear(this.board,
      h('table', { class: 'results-table' },
        h('thead', {}, h('tr', {}, ['#', t('table.player'), t('table.result'), t('table.time'), t('table.cards'), t('table.score'), t('table.moves'), ...(this.day.code ? [t('table.replay')] : [])].map((text) => h('th', { scope: 'col' }, text)))),
        h('tbody', {}, entries.map((e) => h('tr', { class: this.me && this.me.entry && this.me.entry.entry_id === e.entry_id ? 'me' : '' },
          h('td', { 'data-label': '#' }, String(e.rank)),
          h('td', { 'data-label': t('table.player'), class: 'who' }, e.name),
          h('td', { 'data-label': t('table.result') }, resultText(e.result)),
          h('td', { 'data-label': t('table.time') }, e.result === 'won' ? clock(e.time_ms) : '—'),
          h('td', { 'data-label': t('table.cards') }, `${e.foundation_cards}/52`),
          h('td', { 'data-label': t('table.score') }, String(e.score)),
          h('td', { 'data-label': t('table.moves') }, String(e.actions)),
          // A past day's records are public: its games can be watched.
          !this.day.code ? null : h('td', { 'data-label': t('table.replay') }, h('a', { href: `/daily/${this.day.date}/replay/${e.entry_id}`, 'data-link': '' }, t('standings.watch'))))))),
      Number.isFinite(total) && total > entries.length ? h('p', { class: 'small' }, t('daily.total', { count: total })) : null);
  }

  // The live leaderboard socket: each message replaces the table.
  live(attempt = 0) {
    if (this.destroyed) return;
    const scheme = location.protocol === 'https:' ? 'wss:' : 'ws:';
    const ws = new WebSocket(`${scheme}//${location.host}/ws/daily/${this.day.date}`);
    this.ws = ws;
    setConnectionIndicator(attempt ? 'reconnecting' : 'connecting');
    let opened = false;
    ws.onopen = () => {
      opened = true;
      setConnectionIndicator('connected');
    };
    ws.onmessage = (event) => {
      let msg;
      try {
        msg = JSON.parse(event.data);
      } catch {
        return;
      }
      if (msg.type === 'ping') ws.send(JSON.stringify({ type: 'pong', t: msg.t }));
      else if (msg.type === 'daily_leaderboard') {
        this.showBoard(msg.entries || [], msg.total);
        if (this.me && this.me.entry && msg.total !== this.me.total) this.refreshMe();
      }
    };
    ws.onclose = (event) => {
      if (this.destroyed || ws !== this.ws) return;
      if (event.code === 4404) {
        setConnectionIndicator(null);
        return;
      }
      setConnectionIndicator(navigator.onLine === false ? 'offline' : 'reconnecting');
      const next = opened ? 1 : attempt + 1;
      const wait = Math.min(15000, 500 * 2 ** next);
      this.retry = setTimeout(() => this.live(next), wait / 2 + Math.random() * wait / 2);
    };
  }
}


// Whether this browser started the race (it holds its keys), or another one did.
function ownAttempt(raceId) {
  const creds = raceCreds(raceId);
  return Boolean(creds.token || creds.host_key);
}
