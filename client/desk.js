// The review desk (/desk), for moderators: a day's held and top results, daily
// and of rated races, newest first, each with its replay, its signals and a
// form to confirm or disqualify it (or reverse the decision) with a note; and
// the audit log of every decision. The routes are GET /api/desk,
// POST /api/desk/decisions and GET /api/desk/audit (docs/protocol.md).

import { h, clear, clock, toast, api } from './dom.js';
import { t, language } from './i18n.js';

const NOTE_MAX = 280;

function today() {
  return new Date().toISOString().slice(0, 10);
}

function when(ms) {
  return ms ? new Date(ms).toLocaleString(language()) : '—';
}

export class DeskPage {
  constructor(main) {
    this.main = main;
    this.date = new URLSearchParams(location.search).get('date') || today();
    this.filter = 'all';
    this.results = [];
    this.audit = [];
    this.gone = false;
  }

  destroy() {
    this.gone = true;
  }

  async mount() {
    document.title = t('title.page', { title: t('desk.title') });
    clear(this.main, h('p', { class: 'loading' }, t('desk.loading')));
    await this.load();
  }

  async load() {
    let desk;
    let audit;
    try {
      [desk, audit] = await Promise.all([
        api('GET', `/api/desk?date=${encodeURIComponent(this.date)}`),
        api('GET', '/api/desk/audit?limit=50'),
      ]);
    } catch (error) {
      if (this.gone) return;
      const text = error.status === 401 || error.status === 403 ? t('desk.refused') : t('desk.failed', { message: error.message });
      clear(this.main, h('div', { class: 'panel desk' }, h('h1', {}, t('desk.title')), h('p', { role: 'alert' }, text)));
      return;
    }
    if (this.gone) return;
    this.results = desk.results;
    this.audit = audit.audit;
    this.render();
  }

  render() {
    const shown = this.results.filter((r) => this.filter === 'all' || r.status === 'held');
    const day = h('input', { type: 'date', id: 'desk-day', value: this.date, max: today(), min: '2026-01-01' });
    day.addEventListener('change', () => {
      if (!day.value) return;
      this.date = day.value;
      history.replaceState(null, '', `/desk?date=${this.date}`);
      this.load();
    });
    const filters = h('div', { class: 'desk-filter', role: 'group', 'aria-label': t('desk.show') },
      ['all', 'open'].map((key) => h('button', {
        type: 'button',
        'aria-pressed': String(this.filter === key),
        onclick: () => { this.filter = key; this.render(); },
      }, t(`desk.filter_${key}`))));
    clear(this.main,
      h('div', { class: 'panel desk' },
        h('h1', {}, t('desk.title')),
        h('p', { class: 'small' }, t('desk.intro')),
        h('div', { class: 'row desk-controls' }, h('label', { for: 'desk-day' }, t('desk.day')), day, filters)),
      shown.length
        ? h('ul', { class: 'desk-list' }, shown.map((r) => this.card(r)))
        : h('p', { class: 'panel desk-empty' }, t('desk.none')),
      this.auditPanel());
  }

  card(r) {
    const line = r.line;
    const signals = [];
    if (r.review) signals.push(h('div', {}, h('dt', {}, t('desk.pace')), h('dd', {}, r.review)));
    signals.push(h('div', {}, h('dt', {}, t('desk.line')), h('dd', {}, line
      ? [t('desk.line_figures', {
          on: line.on_line,
          decisions: line.decisions,
          share: line.decisions ? Math.round((100 * line.on_line) / line.decisions) : 0,
          run: line.longest_run,
          undos: line.undos,
          actions: line.actions,
          par: line.par === null ? '—' : line.par,
        }), h('br'), t('desk.pauses', { hard: line.hard_pause_ms ?? '—', easy: line.easy_pause_ms ?? '—' })]
      : t('desk.unmeasured'))));
    if (r.line_held) signals.push(h('div', {}, h('dt', {}, t('desk.line_held')), h('dd', {}, r.line_held)));
    const decision = r.decision;
    return h('li', { class: `panel desk-result status-${r.status}`, 'data-result': r.result },
      h('div', { class: 'desk-head' },
        h('strong', { class: 'desk-name' }, r.name),
        h('span', { class: 'tag' }, r.kind === 'daily' ? t('desk.kind_daily') : t('desk.kind_race')),
        h('span', { class: `tag desk-status status-${r.status}` }, t(`desk.status_${r.status}`))),
      h('p', { class: 'desk-outcome' },
        r.outcome === 'won' && r.time_ms !== null ? t('desk.won_in', { time: clock(r.time_ms) }) : t('desk.not_won'),
        ' · ', t('desk.actions', { count: r.actions }),
        ' · ', r.rank ? t('desk.rank', { rank: r.rank }) : t('desk.no_rank'),
        ' · ', when(r.at)),
      h('dl', { class: 'desk-signals' }, signals),
      h('p', { class: 'row desk-links' },
        h('a', { href: r.replay, class: 'button', 'data-link': '' }, t('desk.replay')),
        h('a', { href: `${r.record}/text`, class: 'button', target: '_blank', rel: 'noopener' }, t('desk.record')),
        r.race ? h('a', { href: r.race, class: 'button', 'data-link': '' }, t('desk.open_race')) : null),
      decision ? h('p', { class: 'desk-decision' }, t('desk.decided', { status: t(`desk.status_${decision.status}`), by: decision.by, when: when(decision.at), note: decision.note })) : null,
      this.form(r));
  }

  form(r) {
    const id = `note-${r.result.replace(/[^A-Za-z0-9_-]/g, '_')}`;
    const note = h('textarea', { id, rows: 2, maxlength: NOTE_MAX, required: true, class: 'desk-note' });
    const verdicts = r.status === 'confirmed' ? ['disqualified'] : r.status === 'disqualified' ? ['confirmed'] : ['confirmed', 'disqualified'];
    const reversing = r.status === 'confirmed' || r.status === 'disqualified';
    const label = (v) => (reversing ? t(v === 'confirmed' ? 'desk.reverse_confirm' : 'desk.reverse_disqualify') : t(v === 'confirmed' ? 'desk.confirm' : 'desk.disqualify'));
    const buttons = verdicts.map((v) => h('button', {
      type: 'button',
      class: v === 'confirmed' ? 'primary desk-confirm' : 'danger desk-disqualify',
      onclick: (e) => this.decide(r, v, note, e.currentTarget),
    }, label(v)));
    return h('div', { class: 'desk-form' }, h('label', { for: id, class: 'small' }, t('desk.note')), note, h('div', { class: 'row' }, buttons));
  }

  async decide(r, verdict, noteEl, button) {
    const note = noteEl.value.trim();
    if (!note) {
      toast(t('desk.need_note'));
      noteEl.focus();
      return;
    }
    const label = button.textContent;
    button.disabled = true;
    button.textContent = t('desk.sending');
    try {
      await api('POST', '/api/desk/decisions', { result: r.result, verdict, note, was: r.status });
      toast(t('desk.done', { status: t(`desk.status_${verdict}`) }));
    } catch (error) {
      if (error.status === 409) toast(t('desk.meanwhile', { message: error.message }));
      else {
        toast(error.message);
        button.disabled = false;
        button.textContent = label;
        return;
      }
    }
    await this.load();
  }

  auditPanel() {
    const rows = this.audit.map((a) => h('tr', {},
      h('td', { 'data-label': t('desk.audit_when') }, when(a.at)),
      h('td', { 'data-label': t('desk.audit_who') }, a.by),
      h('td', { 'data-label': t('desk.audit_what') }, t('desk.audit_what_text', {
        name: a.name,
        was: t(`desk.status_${a.was}`),
        status: t(`desk.status_${a.status}`),
        reversed: a.action === 'reverse' ? t('desk.audit_reversed') : '',
      })),
      h('td', { 'data-label': t('desk.audit_why') }, a.note)));
    return h('section', { class: 'panel desk-audit' },
      h('h2', {}, t('desk.audit')),
      rows.length
        ? h('table', { class: 'audit-table' },
          h('thead', {}, h('tr', {}, ['desk.audit_when', 'desk.audit_who', 'desk.audit_what', 'desk.audit_why'].map((k) => h('th', { scope: 'col' }, t(k))))),
          h('tbody', {}, rows))
        : h('p', {}, t('desk.audit_none')));
  }
}
