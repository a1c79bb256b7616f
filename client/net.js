// The race WebSocket: join, reconnect with backoff, event sequence numbers
// (gap -> resync), actions resent with the same action_id until answered,
// ping/pong. See docs/protocol.md.

const EVENTS = new Set(['player_joined', 'race_starting', 'progress', 'race_over', 'rematch']);
const ACTIONS = new Set(['move', 'tap', 'double_tap', 'undo', 'resign']);
const SILENCE_MS = 45000; // a server silent this long is dead
const IDLE_PING_MS = 20000; // we ping when we have sent nothing for this long
const RESYNC_RETRY_MS = 4000;
const ANSWER_MS = 15000; // an action unanswered this long means a stuck connection
const MAX_BACKOFF_MS = 10000;

// Close codes after which reconnecting by itself would be wrong.
const FINAL_CLOSES = { 4404: 'no_race', 4409: 'replaced' };

export class RaceConnection {
  // handlers: message(msg) for everything the app should see, state(name, detail)
  // for connecting | connected | reconnecting | offline | closed.
  constructor(raceId, handlers) {
    this.raceId = raceId;
    this.handlers = handlers;
    this.ws = null;
    this.joinMessage = null;
    this.joined = false;
    this.stopped = true;
    this.lastSeq = null;
    this.pending = new Map(); // action_id -> {msg, sentAt}, in sending order
    this.attempt = 0;
    this.retryTimer = 0;
    this.resyncAt = 0;
    this.lastHeard = 0;
    this.lastSent = 0;
    // action_ids must never repeat for a player, even across reloads.
    this.idPrefix = Array.from(crypto.getRandomValues(new Uint8Array(6)), (b) => (b % 36).toString(36)).join('');
    this.counter = 0;
    this.state = 'closed';
    this.welcomes = 0; // how many times the server welcomed us (1 + reconnects)
    this.watchdog = setInterval(() => this.checkHealth(), 5000);
    this.onOnline = () => (this.joined ? this.setState('connected') : this.reconnectNow());
    this.onOffline = () => this.setState('offline');
    window.addEventListener('online', this.onOnline);
    window.addEventListener('offline', this.onOffline);
  }

  // Connect and send `join` (again after every reconnect, with last_seq).
  start(joinMessage) {
    this.joinMessage = joinMessage;
    this.stopped = false;
    this.attempt = 0;
    this.open();
  }

  // After the first welcome a player comes back with their token, never their name.
  rejoinAs(fields) {
    this.joinMessage = { type: 'join', ...fields };
  }

  stop() {
    this.stopped = true;
    clearTimeout(this.retryTimer);
    if (this.ws) this.ws.close(1000);
    this.ws = null;
    this.joined = false;
    this.setState('closed');
  }

  destroy() {
    this.stop();
    clearInterval(this.watchdog);
    window.removeEventListener('online', this.onOnline);
    window.removeEventListener('offline', this.onOffline);
  }

  open() {
    clearTimeout(this.retryTimer);
    const scheme = location.protocol === 'https:' ? 'wss:' : 'ws:';
    const ws = new WebSocket(`${scheme}//${location.host}/ws/races/${encodeURIComponent(this.raceId)}`);
    this.ws = ws;
    this.joined = false;
    this.setState(this.attempt ? 'reconnecting' : 'connecting');
    ws.onopen = () => {
      this.lastHeard = Date.now();
      this.sendNow({ ...this.joinMessage, last_seq: this.lastSeq });
    };
    ws.onmessage = (event) => {
      if (ws !== this.ws) return;
      this.lastHeard = Date.now();
      let msg;
      try {
        msg = JSON.parse(event.data);
      } catch {
        return;
      }
      if (msg && typeof msg === 'object') this.receive(msg);
    };
    ws.onclose = (event) => {
      if (ws !== this.ws) return;
      this.ws = null;
      this.joined = false;
      if (this.stopped) return;
      const final = FINAL_CLOSES[event.code];
      if (final) {
        this.stopped = true;
        // Another tab plays now: what this one still had queued must never
        // be sent later (it would undo moves made over there).
        this.pending.clear();
        this.setState('closed', final);
        return;
      }
      this.scheduleReconnect();
    };
  }

  scheduleReconnect() {
    clearTimeout(this.retryTimer);
    this.setState(navigator.onLine === false ? 'offline' : 'reconnecting');
    const base = Math.min(MAX_BACKOFF_MS, 300 * 2 ** this.attempt);
    this.attempt += 1;
    this.retryTimer = setTimeout(() => this.open(), base / 2 + Math.random() * base / 2);
  }

  reconnectNow() {
    if (this.stopped || this.joined) return;
    this.attempt = 0;
    if (this.ws) this.ws.close();
    this.open();
  }

  // Drop the connection as if the network did (tests and the "offline" path use it).
  drop() {
    if (this.ws) this.ws.close(4000);
  }

  checkHealth() {
    if (!this.ws || this.stopped) return;
    const now = Date.now();
    if (this.ws.readyState === WebSocket.OPEN && now - this.lastHeard > SILENCE_MS) {
      const dead = this.ws;
      this.ws = null;
      this.joined = false;
      dead.onclose = null;
      dead.close();
      this.scheduleReconnect();
      return;
    }
    // An action unanswered for long: the connection is not what it seems.
    // Reconnecting resends it with the same action_id (the server never applies it twice).
    const oldest = this.pending.values().next().value;
    if (this.joined && oldest && now - oldest.sentAt > ANSWER_MS) {
      this.drop();
      return;
    }
    if (this.joined && now - this.lastSent > IDLE_PING_MS) this.send({ type: 'ping', t: now });
  }

  setState(state, detail) {
    if (state === this.state && !detail) return;
    this.state = state;
    this.handlers.state(state, detail);
  }

  sendNow(msg) {
    if (!this.ws || this.ws.readyState !== WebSocket.OPEN) return false;
    this.ws.send(JSON.stringify(msg));
    this.lastSent = Date.now();
    return true;
  }

  // Send a non-action message now if joined; returns whether it went out.
  send(msg) {
    return this.joined && this.sendNow(msg);
  }

  // Send an action; it is resent with the same action_id after a reconnect
  // until the server answers it. Returns the action_id.
  act(fields) {
    if (this.stopped) return null; // replaced or closed: no queueing for later
    this.counter += 1;
    const msg = { ...fields, action_id: `${this.idPrefix}-${this.counter}` };
    const action = { msg, sentAt: Date.now(), sent: false };
    this.pending.set(msg.action_id, action);
    action.sent = this.send(msg);
    return msg.action_id;
  }

  // Whether an unanswered action went out, so that the server may have applied
  // it (its answer lost with a connection); one queued offline never went.
  wentOut(actionId) {
    const action = this.pending.get(actionId);
    return Boolean(action && action.sent);
  }

  receive(msg) {
    switch (msg.type) {
      case 'ping':
        this.sendNow({ type: 'pong', t: msg.t });
        return;
      case 'welcome':
        this.welcomes += 1;
        this.joined = true;
        this.attempt = 0;
        this.resyncAt = 0;
        if (msg.race && Number.isInteger(msg.race.seq)) this.lastSeq = msg.race.seq;
        this.setState('connected');
        this.handlers.message(msg);
        for (const action of this.pending.values()) {
          action.sentAt = Date.now();
          if (this.sendNow(action.msg)) action.sent = true;
        }
        return;
      case 'snapshot':
        this.resyncAt = 0;
        if (msg.race && Number.isInteger(msg.race.seq)) this.lastSeq = msg.race.seq;
        this.handlers.message(msg);
        return;
      case 'reject':
        if (msg.code === 'try_again' && this.pending.has(msg.action_id)) {
          // The server could not record it: same action, same id, a little later.
          const action = this.pending.get(msg.action_id);
          setTimeout(() => {
            if (this.pending.get(msg.action_id) !== action) return;
            action.sentAt = Date.now();
            if (this.send(action.msg)) action.sent = true;
          }, 1000);
          return;
        }
        if (!this.pending.delete(msg.action_id)) return;
        this.handlers.message(msg);
        return;
      case 'ack':
        if (!this.pending.delete(msg.action_id)) return; // an answer we already had
        this.handlers.message(msg);
        return;
      default:
        if (EVENTS.has(msg.type) && Number.isInteger(msg.seq)) {
          if (this.lastSeq !== null && msg.seq <= this.lastSeq) return; // seen already
          // A gap: an event sent to everyone never came (a rival's progress
          // that changed nothing shown is not sent: docs/protocol.md).
          const prev = Number.isInteger(msg.prev_seq) ? msg.prev_seq : msg.seq - 1;
          if (this.lastSeq !== null && prev > this.lastSeq) {
            this.requestResync();
            return;
          }
          this.lastSeq = msg.seq;
          this.resyncAt = 0;
        }
        this.handlers.message(msg);
    }
  }

  // Ask for the events we missed; the answer replays them in order.
  requestResync() {
    const now = Date.now();
    if (this.resyncAt && now - this.resyncAt < RESYNC_RETRY_MS) return;
    this.resyncAt = now;
    this.send({ type: 'resync', last_seq: this.lastSeq });
  }

  get pendingCount() {
    return this.pending.size;
  }
}

export const isAction = (type) => ACTIONS.has(type);
