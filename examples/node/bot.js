#!/usr/bin/env node
// A Domino Arena bot in Node.js, written from proto/domino_arena/v1/*.proto alone (no SDK).
//
// It dials the referee's BotService.Play stream, says Hello (name, token, games), and plays
// every match the referee seats it in, all four games, over that one stream. It keeps each
// match's deal history from the events the referee sends, picks one of the legal actions the
// request carries with a simple heuristic, reconnects with backoff when the stream drops (the
// referee gives a seat back to a bot that returns within its grace window), and stops cleanly
// on SIGINT or SIGTERM.
//
//   node bot.js [--server HOST:PORT] [--name NAME] [--token TOKEN | --token-file FILE]
//               [--proto-dir DIR]
//
// Each option also comes from the environment: DOMINO_ARENA_SERVER (default 127.0.0.1:50051),
// DOMINO_ARENA_BOT, DOMINO_ARENA_TOKEN, DOMINO_ARENA_PROTO (default ../../proto).
'use strict';

const fs = require('node:fs');
const path = require('node:path');
const grpc = require('@grpc/grpc-js');
const protoLoader = require('@grpc/proto-loader');

const PROTOCOL_VERSION = 2;
const GAMES = ['moon', 'passing', 'straight', 'doubles'];
const CLIENT = 'domino-arena-example-node/1.0.0';
// DOMINO_ARENA_MISPLAY=malformed answers every request with no action: a broken bot on purpose,
// to see `domino-arena check` (and the referee's fault policy) report it; =throw makes its
// choose throw, which it reports in-band (ActionReply.error: a bot_error fault).
const MISPLAY = process.env.DOMINO_ARENA_MISPLAY === 'malformed';
const THROW = process.env.DOMINO_ARENA_MISPLAY === 'throw';

// -- configuration ---------------------------------------------------------------------------

function parseArgs(argv) {
  const options = {};
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i];
    const known = ['--server', '--name', '--token', '--token-file', '--proto-dir'];
    if (arg === '--help' || arg === '-h') {
      console.log(
        'usage: node bot.js [--server HOST:PORT] [--name NAME] ' +
          '[--token TOKEN | --token-file FILE] [--proto-dir DIR]',
      );
      process.exit(0);
    }
    if (!known.includes(arg) || i + 1 >= argv.length) {
      console.error(`bot.js: unknown option or missing value: ${arg} (try --help)`);
      process.exit(2);
    }
    options[arg.slice(2)] = argv[++i];
  }
  const env = process.env;
  let token = options.token || env.DOMINO_ARENA_TOKEN || '';
  if (options['token-file']) {
    token = fs.readFileSync(options['token-file'], 'utf8').trim();
  }
  const config = {
    server: options.server || env.DOMINO_ARENA_SERVER || '127.0.0.1:50051',
    name: options.name || env.DOMINO_ARENA_BOT || '',
    token,
    protoDir:
      options['proto-dir'] || env.DOMINO_ARENA_PROTO || path.resolve(__dirname, '../../proto'),
  };
  if (!config.name || !config.token) {
    console.error('bot.js: a bot name and a token are needed (--name/--token or the environment)');
    process.exit(2);
  }
  return config;
}

function loadProto(protoDir) {
  const definition = protoLoader.loadSync('domino_arena/v1/referee.proto', {
    includeDirs: [protoDir],
    keepCase: true, // field names as in the .proto: match_id, legal_actions
    longs: String,
    enums: String, // enum values by name; an unknown value stays a number
    defaults: true,
    oneofs: true, // each oneof gets a field naming its set member: message.message === 'request'
  });
  return grpc.loadPackageDefinition(definition).domino_arena.v1;
}

// -- tiles and the deal history --------------------------------------------------------------

const key = (tile) => `${tile.high}-${tile.low}`;
const pips = (tile) => tile.high + tile.low;
const isDouble = (tile) => tile.high === tile.low;
const has = (tile, n) => tile.high === n || tile.low === n;
const actionText = (action) => {
  const kind = action.kind;
  const body = action[kind] || {};
  if (kind === 'play') return `play ${key(body.tile)}${body.end ? ' ' + body.end : ''}`;
  if (kind === 'bid') return `bid ${body.value}`;
  if (kind === 'discard') return `discard ${body.tile ? key(body.tile) : '?'}`;
  if (kind === 'trump') return `trump ${body.suit} ${body.number}`;
  return kind;
};

class MatchState {
  constructor(start) {
    this.id = start.match_id;
    this.game = start.game.game; // moon, passing, straight or doubles
    this.seat = start.seat;
    this.players = start.players;
    this.deal = 0;
    this.history = []; // the public steps of the current deal, as this seat saw them
    this.played = new Set(); // tiles seen played this deal
    if (start.resumed && start.snapshot) {
      this.deal = start.snapshot.deal;
      for (const step of start.snapshot.history) this.record(step);
    }
  }

  record(step) {
    if (step.seat === -1) {
      // a deal step: a new deal starts with an empty history
      this.history = [];
      this.played.clear();
      return;
    }
    this.history.push(step);
    const action = step.action || {};
    if (action.kind === 'play' && action.play.tile) this.played.add(key(action.play.tile));
  }

  onEvents(events) {
    for (const event of events || []) {
      this.deal = event.deal;
      if (event.step) this.record(event.step);
    }
  }
}

// -- choosing a move -------------------------------------------------------------------------

// How many tiles showing this tile's numbers are out of our reach (played, or in our hand):
// a tile whose numbers are mostly gone is hard to place later, so it goes first.
function deadness(state, hand, tile) {
  let count = 0;
  const seen = new Set([...state.played, ...hand.map(key)]);
  for (const k of seen) {
    const [h, l] = k.split('-').map(Number);
    if (h === tile.high || l === tile.high || h === tile.low || l === tile.low) count++;
  }
  return count;
}

// Passing, Straight, Doubles: the heaviest tile (it costs most if caught in hand), doubles and
// "dead" numbers first among equals; no tile to play: draw or pass, whichever is legal.
function chooseLine(state, obs) {
  const plays = obs.legal_actions.filter((a) => a.kind === 'play');
  if (plays.length === 0) return obs.legal_actions[0];
  const score = (a) => {
    const tile = a.play.tile;
    return pips(tile) * 1000 + (isDouble(tile) ? 100 : 0) + deadness(state, obs.hand, tile);
  };
  return plays.reduce((best, a) => (score(a) > score(best) ? a : best));
}

// Moon: the suits of docs/rules.md 1.8-1.11.
function moonTrump(view) {
  if (!view || !view.trump_named) return { suit: 'TRUMP_SUIT_NONE', number: 0 };
  return view.trump;
}
function isTrump(tile, trump) {
  if (trump.suit === 'TRUMP_SUIT_DOUBLES') return isDouble(tile);
  if (trump.suit === 'TRUMP_SUIT_NUMBER') return has(tile, trump.number);
  return false;
}
const TRUMP = 'T';
const ledSuit = (tile, trump) => (isTrump(tile, trump) ? TRUMP : tile.high);
function follows(tile, suit, trump) {
  return suit === TRUMP ? isTrump(tile, trump) : !isTrump(tile, trump) && has(tile, suit);
}
const other = (tile, n) => (tile.high === n ? tile.low : tile.high);
function rank(tile, suit, trump) {
  if (suit === TRUMP) {
    if (trump.suit === 'TRUMP_SUIT_DOUBLES') return tile.high;
    return isDouble(tile) ? 100 : other(tile, trump.number);
  }
  return isDouble(tile) ? 100 : other(tile, suit);
}
// Does `tile`, played now, take the trick so far (`plays`, leader first)?
function wins(tile, plays, trump) {
  const all = [...plays.map((p) => p.tile), tile];
  const led = ledSuit(all[0], trump);
  const anyTrump = all.some((t) => isTrump(t, trump));
  const suit = anyTrump ? TRUMP : led;
  const value = (t) => (follows(t, suit, trump) ? rank(t, suit, trump) : -1);
  return all.slice(0, -1).every((t) => value(t) < value(tile));
}

// The number suit this hand would hold most of (with its double), and how many tricks that
// promises: a count of tiles of the suit, plus its double, plus half of the other doubles.
function bestSuit(hand) {
  let best = { number: 6, count: -1, tricks: 0 };
  for (let n = 6; n >= 0; n--) {
    const count = hand.filter((t) => has(t, n)).length;
    const double = hand.some((t) => isDouble(t) && t.high === n) ? 1 : 0;
    const others = hand.filter((t) => isDouble(t) && t.high !== n).length;
    const tricks = count + double + others / 2 - 1;
    if (count + double > best.count) best = { number: n, count: count + double, tricks };
  }
  return best;
}

function chooseMoon(state, obs) {
  const legal = obs.legal_actions;
  const view = obs.moon;
  const hand = obs.hand;
  const bids = legal.filter((a) => a.kind === 'bid');
  if (bids.length > 0) {
    // with the widow still to come, bid the tricks the hand promises, if any bid is that low
    const tricks = bestSuit(hand).tricks;
    const fitting = bids.filter((a) => a.bid.value <= tricks);
    if (fitting.length > 0) return fitting.reduce((a, b) => (b.bid.value > a.bid.value ? b : a));
    return legal.find((a) => a.kind === 'pass') || legal[0];
  }
  const discards = legal.filter((a) => a.kind === 'discard');
  if (discards.length > 0) {
    const suit = bestSuit(hand).number;
    const cost = (a) =>
      (has(a.discard.tile, suit) ? 100 : 0) + (isDouble(a.discard.tile) ? 50 : 0) +
      pips(a.discard.tile);
    return discards.reduce((a, b) => (cost(b) < cost(a) ? b : a));
  }
  const trumps = legal.filter((a) => a.kind === 'trump');
  if (trumps.length > 0) {
    const suit = bestSuit(hand);
    const doubles = hand.filter(isDouble).length;
    const want = doubles > suit.count ? { suit: 'TRUMP_SUIT_DOUBLES' } : { suit: 'TRUMP_SUIT_NUMBER', number: suit.number };
    return (
      trumps.find(
        (a) => a.trump.suit === want.suit && (want.number === undefined || a.trump.number === want.number),
      ) || trumps[0]
    );
  }
  const plays = legal.filter((a) => a.kind === 'play');
  if (plays.length === 0) return legal[0];
  const trump = moonTrump(view);
  const trick = (view && view.trick) || [];
  if (trick.length === 0) {
    // lead the strongest tile: a trump if we hold one, then doubles, then the heaviest
    const strength = (a) => {
      const t = a.play.tile;
      if (isTrump(t, trump)) return 1000 + rank(t, TRUMP, trump);
      return (isDouble(t) ? 500 : 0) + pips(t);
    };
    return plays.reduce((a, b) => (strength(b) > strength(a) ? b : a));
  }
  // follow: the cheapest tile that takes the trick, else throw the lightest
  const winners = plays.filter((a) => wins(a.play.tile, trick, trump));
  const pool = winners.length > 0 ? winners : plays;
  const cost = (a) => (isTrump(a.play.tile, trump) ? 100 : 0) + pips(a.play.tile);
  return pool.reduce((a, b) => (cost(b) < cost(a) ? b : a));
}

function choose(state, obs) {
  if (THROW) throw new RangeError('a bug on purpose (DOMINO_ARENA_MISPLAY=throw)');
  return state.game === 'moon' ? chooseMoon(state, obs) : chooseLine(state, obs);
}

// -- the stream ------------------------------------------------------------------------------

// Errors that would come back on every retry: give up instead of reconnecting.
const FATAL_ERRORS = new Set([
  'ERROR_CODE_UNAUTHENTICATED',
  'ERROR_CODE_BAD_HELLO',
  'ERROR_CODE_UNKNOWN_GAME',
  'ERROR_CODE_ALREADY_CONNECTED',
]);
const FATAL_STATUS = new Set([
  grpc.status.UNAUTHENTICATED,
  grpc.status.PERMISSION_DENIED,
  grpc.status.INVALID_ARGUMENT,
  grpc.status.UNIMPLEMENTED,
  grpc.status.FAILED_PRECONDITION,
  grpc.status.ABORTED, // another process of this bot took over its seats
]);

// An enum value by name without its prefix. A value this copy of the .proto does not define
// arrives as a number: name the ones we know were added since, and never fail on the others.
const ADDED = { TERMINATION_: { 5: 'ADJUDICATED' } };
const enumName = (value, prefix) => {
  if (typeof value === 'string') return value.replace(prefix, '');
  return (ADDED[prefix] && ADDED[prefix][value]) || `UNKNOWN(${value})`;
};

class Bot {
  constructor(config, proto) {
    this.config = config;
    this.client = new proto.BotService(config.server, grpc.credentials.createInsecure());
    this.matches = new Map();
    this.stopping = false;
    this.fatal = null;
    this.call = null;
  }

  log(text) {
    console.log(`[${this.config.name}] ${text}`);
  }

  // One stream: resolves when it ends (the caller decides whether to reconnect).
  connect() {
    return new Promise((resolve) => {
      let welcomed = false;
      let done = false;
      const finish = (why) => {
        if (done) return;
        done = true;
        this.call = null;
        resolve({ welcomed, why });
      };
      const call = this.client.Play();
      this.call = call;
      call.on('data', (message) => {
        try {
          if (!welcomed) {
            if (message.message === 'welcome') {
              welcomed = true;
              this.log(`welcomed by ${this.config.server} (games: ${message.welcome.games.join(', ')})`);
            } else if (message.message === 'error') {
              this.onError(message.error);
              call.cancel();
            }
            return;
          }
          this.dispatch(message);
        } catch (err) {
          this.log(`error handling a message: ${err.stack || err}`);
        }
      });
      // 'status' comes last, whatever ended the call ('error' comes before it when not OK)
      call.on('error', (err) => {
        if (FATAL_STATUS.has(err.code) && !this.stopping) this.fatal = this.fatal || err.details;
        setImmediate(() => finish(`status ${err.code}: ${err.details}`));
      });
      call.on('status', (status) => finish(`status ${status.code}: ${status.details}`));
      call.write({
        hello: {
          name: this.config.name,
          token: this.config.token,
          games: GAMES,
          protocol_version: PROTOCOL_VERSION,
          client: CLIENT,
        },
      });
    });
  }

  onError(error) {
    const where = error.match_id ? ` (match ${error.match_id})` : '';
    this.log(`referee error ${enumName(error.code, 'ERROR_CODE_')}: ${error.message}${where}`);
    if (typeof error.code === 'string' && FATAL_ERRORS.has(error.code)) {
      this.fatal = `${error.code}: ${error.message}`;
    }
  }

  dispatch(message) {
    const kind = message.message;
    if (kind === 'batch') {
      for (const inner of message.batch.messages) this.dispatch(inner);
      return;
    }
    if (kind === 'error') {
      this.onError(message.error);
      if (this.fatal && this.call) this.call.cancel();
      return;
    }
    const body = message[kind];
    if (!body || body.match_id === undefined) return; // welcome again, or a kind we do not know
    if (kind === 'match_start') {
      const state = new MatchState(body);
      this.matches.set(body.match_id, state);
      const resumed = body.resumed ? ' (resumed)' : '';
      this.log(`match start ${body.match_id}: ${state.game} seat ${body.seat}${resumed}`);
      return;
    }
    const state = this.matches.get(body.match_id);
    if (!state) return; // a match this process never saw start
    state.onEvents(body.events);
    if (kind === 'request') {
      if (MISPLAY) {
        this.reply({ match_id: body.match_id, turn: body.turn });
        return;
      }
      let action;
      try {
        action = choose(state, body.observation);
      } catch (err) {
        // Our own bug: say so in-band (ActionReply.error), and the referee charges a
        // bot_error fault with this text at once instead of letting the clock run out.
        const type = (err && err.name) || 'Error';
        const text = String((err && err.message) || err).slice(0, 300);
        this.log(`match ${state.id} turn ${body.turn}: choose threw ${type}: ${text}`);
        this.reply({ match_id: body.match_id, turn: body.turn, error: { type, message: text } });
        return;
      }
      this.reply({ match_id: body.match_id, turn: body.turn, action });
    } else if (kind === 'hand_end') {
      this.log(
        `match ${state.id}: deal ${body.deal} ends ${enumName(body.end, 'HAND_END_KIND_')}, ` +
          `points ${body.points.join('/')}, scores ${body.scores.join('/')} ` +
          `(${state.history.length} steps seen)`,
      );
    } else if (kind === 'fault') {
      this.log(
        `match ${state.id}: FAULT ${enumName(body.kind, 'FAULT_KIND_')} at turn ${body.turn}: ` +
          `${body.reason} (strikes ${body.strikes}${body.forfeited ? ', forfeited' : ''})`,
      );
    } else if (kind === 'match_end') {
      this.matches.delete(state.id);
      const r = body.result || {};
      // NORMAL, FORFEIT, VOID, ABORTED, ADJUDICATED, or a value newer than this bot
      const termination = enumName(r.termination, 'TERMINATION_');
      const winner = r.winner === -1 ? 'no winner' : `side ${r.winner} wins`;
      const ours = r.side_of_seat && r.side_of_seat[state.seat];
      const outcome = r.winner === -1 ? '' : ours === r.winner ? ' (us)' : ' (not us)';
      this.log(
        `match end ${state.id}: ${termination}, ${winner}${outcome}, ` +
          `scores ${(r.scores || []).join('/')}${r.detail ? ': ' + r.detail : ''}`,
      );
    }
  }

  reply(reply) {
    if (this.call) this.call.write({ reply });
  }

  async run() {
    let delay = 0.2;
    while (!this.stopping && !this.fatal) {
      this.log(`connecting to ${this.config.server}`);
      const { welcomed, why } = await this.connect();
      if (this.stopping) break;
      if (this.fatal) {
        this.log(`giving up: ${this.fatal}`);
        break;
      }
      if (welcomed) delay = 0.2; // it was up: retry soon, within the referee's grace window
      const wait = delay * (0.5 + Math.random());
      this.log(`stream lost (${why}); reconnecting in ${wait.toFixed(1)} s`);
      await new Promise((resolve) => {
        const timer = setTimeout(resolve, wait * 1000);
        this.wakeUp = () => {
          clearTimeout(timer);
          resolve();
        };
      });
      this.wakeUp = null;
      delay = Math.min(delay * 2, 2);
    }
    this.client.close();
    return this.fatal ? 1 : 0;
  }

  stop(signal) {
    if (this.stopping) return;
    this.stopping = true;
    this.log(`${signal}: stopping`);
    if (this.call) this.call.cancel();
    if (this.wakeUp) this.wakeUp();
  }
}

function main() {
  const config = parseArgs(process.argv.slice(2));
  const proto = loadProto(config.protoDir);
  const bot = new Bot(config, proto);
  process.on('SIGINT', () => bot.stop('SIGINT'));
  process.on('SIGTERM', () => bot.stop('SIGTERM'));
  bot.run().then((code) => {
    bot.log('stopped');
    process.exitCode = code;
  });
}

if (require.main === module) main();

module.exports = { choose, MatchState };
