// A Domino Arena bot in C++17, written from proto/domino_arena/v1/*.proto alone (no SDK).
//
// It dials the referee's BotService.Play stream, says Hello (name, token, games), and plays
// every match the referee seats it in, all four games, over that one stream. It keeps each
// match's deal history from the events the referee sends, picks one of the legal actions the
// request carries with a simple heuristic, reconnects with backoff when the stream drops (the
// referee gives a seat back to a bot that returns within its grace window), and stops cleanly
// on SIGINT or SIGTERM.
//
//   domino-bot [--server HOST:PORT] [--name NAME] [--token TOKEN | --token-file FILE]
//
// Each option also comes from the environment: DOMINO_ARENA_SERVER (default 127.0.0.1:50051),
// DOMINO_ARENA_BOT, DOMINO_ARENA_TOKEN.

#include <grpcpp/grpcpp.h>
#include <pthread.h>
#include <signal.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <iostream>
#include <map>
#include <memory>
#include <mutex>
#include <random>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "domino_arena/v1/referee.grpc.pb.h"

namespace v1 = domino_arena::v1;

namespace {

constexpr uint32_t kProtocolVersion = 2;
const char* const kClient = "domino-arena-example-cpp/1.0.0";
const char* const kGames[] = {"moon", "passing", "straight", "doubles"};

std::string g_name;
std::mutex g_log_mutex;

void Log(const std::string& text) {
  std::lock_guard<std::mutex> lock(g_log_mutex);
  std::cout << "[" << g_name << "] " << text << std::endl;
}

// -- configuration ---------------------------------------------------------------------------

struct Config {
  std::string server;
  std::string name;
  std::string token;
};

std::string Env(const char* name) {
  const char* value = std::getenv(name);
  return value ? value : "";
}

std::string Trim(std::string text) {
  const char* space = " \t\r\n";
  text.erase(0, text.find_first_not_of(space));
  text.erase(text.find_last_not_of(space) + 1);
  return text;
}

[[noreturn]] void Usage(int status) {
  (status == 0 ? std::cout : std::cerr)
      << "usage: domino-bot [--server HOST:PORT] [--name NAME] [--token TOKEN | --token-file FILE]\n"
         "  (or DOMINO_ARENA_SERVER, DOMINO_ARENA_BOT, DOMINO_ARENA_TOKEN)\n";
  std::exit(status);
}

Config ParseArgs(int argc, char** argv) {
  std::map<std::string, std::string> options;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    if (arg == "--help" || arg == "-h") Usage(0);
    if ((arg != "--server" && arg != "--name" && arg != "--token" && arg != "--token-file") ||
        i + 1 >= argc) {
      std::cerr << "domino-bot: unknown option or missing value: " << arg << "\n";
      Usage(2);
    }
    options[arg.substr(2)] = argv[++i];
  }
  Config config;
  config.server = options.count("server") ? options["server"] : Env("DOMINO_ARENA_SERVER");
  if (config.server.empty()) config.server = "127.0.0.1:50051";
  config.name = options.count("name") ? options["name"] : Env("DOMINO_ARENA_BOT");
  config.token = options.count("token") ? options["token"] : Env("DOMINO_ARENA_TOKEN");
  if (options.count("token-file")) {
    std::ifstream file(options["token-file"]);
    if (!file) {
      std::cerr << "domino-bot: cannot read the token file " << options["token-file"] << "\n";
      std::exit(2);
    }
    std::stringstream text;
    text << file.rdbuf();
    config.token = Trim(text.str());
  }
  if (config.name.empty() || config.token.empty()) {
    std::cerr << "domino-bot: a bot name and a token are needed (--name/--token or the "
                 "environment)\n";
    std::exit(2);
  }
  return config;
}

// -- enum names, new values included ---------------------------------------------------------

// An enum value's name without its prefix. A value newer than the .proto this was built from
// has no name here: name the ones we know were added since, and never fail on the others.
std::string Strip(const std::string& name, const std::string& prefix) {
  return name.compare(0, prefix.size(), prefix) == 0 ? name.substr(prefix.size()) : name;
}

std::string TerminationName(int value) {
  std::string name = v1::Termination_IsValid(value)
                         ? v1::Termination_Name(static_cast<v1::Termination>(value))
                         : "";
  if (!name.empty()) return Strip(name, "TERMINATION_");
  if (value == 5) return "ADJUDICATED";  // the referee's cap on deals (added after version 2)
  return "UNKNOWN(" + std::to_string(value) + ")";
}

template <typename E, typename Valid, typename Name>
std::string EnumName(int value, Valid valid, Name name_of, const std::string& prefix) {
  if (!valid(value)) return "UNKNOWN(" + std::to_string(value) + ")";
  return Strip(name_of(static_cast<E>(value)), prefix);
}

// -- tiles and the deal history --------------------------------------------------------------

std::string Key(const v1::Tile& t) { return std::to_string(t.high()) + "-" + std::to_string(t.low()); }
int Pips(const v1::Tile& t) { return static_cast<int>(t.high() + t.low()); }
bool IsDouble(const v1::Tile& t) { return t.high() == t.low(); }
bool Has(const v1::Tile& t, uint32_t n) { return t.high() == n || t.low() == n; }

struct MatchState {
  std::string id;
  v1::GameConfig::GameCase game = v1::GameConfig::GAME_NOT_SET;
  uint32_t seat = 0;
  uint32_t deal = 0;
  std::vector<v1::Step> history;  // the public steps of the current deal, as this seat saw them
  std::set<std::pair<uint32_t, uint32_t>> played;  // tiles seen played this deal

  void Record(const v1::Step& step) {
    if (step.seat() == -1) {  // a deal step: a new deal starts with an empty history
      history.clear();
      played.clear();
      return;
    }
    history.push_back(step);
    if (step.action().kind_case() == v1::Action::kPlay && step.action().play().has_tile()) {
      const v1::Tile& t = step.action().play().tile();
      played.insert({t.high(), t.low()});
    }
  }

  void OnEvents(const google::protobuf::RepeatedPtrField<v1::Event>& events) {
    for (const v1::Event& event : events) {
      deal = event.deal();
      if (event.has_step()) Record(event.step());
    }
  }
};

// -- choosing a move -------------------------------------------------------------------------

template <typename Score>
const v1::Action* Best(const std::vector<const v1::Action*>& actions, Score score) {
  const v1::Action* best = nullptr;
  double best_score = 0;
  for (const v1::Action* a : actions) {
    double s = score(*a);
    if (best == nullptr || s > best_score) {
      best = a;
      best_score = s;
    }
  }
  return best;
}

std::vector<const v1::Action*> OfKind(const v1::Observation& obs, v1::Action::KindCase kind) {
  std::vector<const v1::Action*> found;
  for (const v1::Action& a : obs.legal_actions())
    if (a.kind_case() == kind) found.push_back(&a);
  return found;
}

// How many tiles showing this tile's numbers are out of our reach (played, or in our hand):
// a tile whose numbers are mostly gone is hard to place later, so it goes first.
int Deadness(const MatchState& state, const v1::Observation& obs, const v1::Tile& tile) {
  std::set<std::pair<uint32_t, uint32_t>> seen = state.played;
  for (const v1::Tile& t : obs.hand()) seen.insert({t.high(), t.low()});
  int count = 0;
  for (const auto& [h, l] : seen)
    if (h == tile.high() || l == tile.high() || h == tile.low() || l == tile.low()) ++count;
  return count;
}

// Passing, Straight, Doubles: the heaviest tile (it costs most if caught in hand), doubles and
// "dead" numbers first among equals; no tile to play: draw or pass, whichever is legal.
const v1::Action* ChooseLine(const MatchState& state, const v1::Observation& obs) {
  auto plays = OfKind(obs, v1::Action::kPlay);
  if (plays.empty()) return &obs.legal_actions(0);
  return Best(plays, [&](const v1::Action& a) {
    const v1::Tile& t = a.play().tile();
    return Pips(t) * 1000 + (IsDouble(t) ? 100 : 0) + Deadness(state, obs, t);
  });
}

// Moon: the suits of docs/rules.md 1.8-1.11.
struct Trump {
  v1::TrumpSuit suit = v1::TRUMP_SUIT_NONE;
  uint32_t number = 0;
};
constexpr int kTrumpSuit = -1;

bool IsTrump(const v1::Tile& t, const Trump& trump) {
  if (trump.suit == v1::TRUMP_SUIT_DOUBLES) return IsDouble(t);
  if (trump.suit == v1::TRUMP_SUIT_NUMBER) return Has(t, trump.number);
  return false;
}
int LedSuit(const v1::Tile& t, const Trump& trump) {
  return IsTrump(t, trump) ? kTrumpSuit : static_cast<int>(t.high());
}
bool Follows(const v1::Tile& t, int suit, const Trump& trump) {
  if (suit == kTrumpSuit) return IsTrump(t, trump);
  return !IsTrump(t, trump) && Has(t, static_cast<uint32_t>(suit));
}
int Other(const v1::Tile& t, uint32_t n) { return static_cast<int>(t.high() == n ? t.low() : t.high()); }
int Rank(const v1::Tile& t, int suit, const Trump& trump) {
  if (suit == kTrumpSuit) {
    if (trump.suit == v1::TRUMP_SUIT_DOUBLES) return static_cast<int>(t.high());
    return IsDouble(t) ? 100 : Other(t, trump.number);
  }
  return IsDouble(t) ? 100 : Other(t, static_cast<uint32_t>(suit));
}
// Does `tile`, played now, take the trick so far (`trick`, leader first)?
bool Wins(const v1::Tile& tile, const google::protobuf::RepeatedPtrField<v1::MoonPlay>& trick,
          const Trump& trump) {
  std::vector<v1::Tile> all;
  for (const v1::MoonPlay& p : trick) all.push_back(p.tile());
  all.push_back(tile);
  bool any_trump = std::any_of(all.begin(), all.end(), [&](const v1::Tile& t) { return IsTrump(t, trump); });
  int suit = any_trump ? kTrumpSuit : LedSuit(all.front(), trump);
  auto value = [&](const v1::Tile& t) { return Follows(t, suit, trump) ? Rank(t, suit, trump) : -1; };
  for (size_t i = 0; i + 1 < all.size(); ++i)
    if (value(all[i]) >= value(tile)) return false;
  return true;
}

// The number suit this hand holds most of (with its double), and how many tricks that
// promises: the tiles of the suit, plus its double, plus half of the other doubles, less one.
struct Suit {
  uint32_t number = 6;
  int count = -1;
  double tricks = 0;
};
Suit BestSuit(const google::protobuf::RepeatedPtrField<v1::Tile>& hand) {
  Suit best;
  for (int n = 6; n >= 0; --n) {
    int count = 0, double_n = 0, others = 0;
    for (const v1::Tile& t : hand) {
      if (Has(t, n)) ++count;
      if (IsDouble(t)) (t.high() == static_cast<uint32_t>(n) ? double_n : others)++;
    }
    if (count + double_n > best.count)
      best = {static_cast<uint32_t>(n), count + double_n, count + double_n + others / 2.0 - 1};
  }
  return best;
}

const v1::Action* ChooseMoon(const MatchState&, const v1::Observation& obs) {
  const auto& hand = obs.hand();
  auto bids = OfKind(obs, v1::Action::kBid);
  if (!bids.empty()) {
    // with the widow still to come, bid the tricks the hand promises, if any bid is that low
    double tricks = BestSuit(hand).tricks;
    std::vector<const v1::Action*> fitting;
    for (const v1::Action* a : bids)
      if (a->bid().value() <= tricks) fitting.push_back(a);
    if (!fitting.empty()) return Best(fitting, [](const v1::Action& a) { return a.bid().value(); });
    auto passes = OfKind(obs, v1::Action::kPass);
    return passes.empty() ? &obs.legal_actions(0) : passes.front();
  }
  auto discards = OfKind(obs, v1::Action::kDiscard);
  if (!discards.empty()) {
    uint32_t suit = BestSuit(hand).number;
    return Best(discards, [&](const v1::Action& a) {
      const v1::Tile& t = a.discard().tile();
      return -((Has(t, suit) ? 100 : 0) + (IsDouble(t) ? 50 : 0) + Pips(t));
    });
  }
  auto trumps = OfKind(obs, v1::Action::kTrump);
  if (!trumps.empty()) {
    Suit suit = BestSuit(hand);
    int doubles = static_cast<int>(std::count_if(hand.begin(), hand.end(), IsDouble));
    for (const v1::Action* a : trumps) {
      if (doubles > suit.count ? a->trump().suit() == v1::TRUMP_SUIT_DOUBLES
                               : a->trump().suit() == v1::TRUMP_SUIT_NUMBER &&
                                     a->trump().number() == suit.number)
        return a;
    }
    return trumps.front();
  }
  auto plays = OfKind(obs, v1::Action::kPlay);
  if (plays.empty()) return &obs.legal_actions(0);
  Trump trump;
  if (obs.has_moon() && obs.moon().has_trump()) {
    trump.suit = obs.moon().trump().suit();
    trump.number = obs.moon().trump().number();
  }
  const auto& trick = obs.moon().trick();
  if (trick.empty()) {
    // lead the strongest tile: a trump if we hold one, then doubles, then the heaviest
    return Best(plays, [&](const v1::Action& a) {
      const v1::Tile& t = a.play().tile();
      if (IsTrump(t, trump)) return 1000 + Rank(t, kTrumpSuit, trump);
      return (IsDouble(t) ? 500 : 0) + Pips(t);
    });
  }
  // follow: the cheapest tile that takes the trick, else throw the lightest
  std::vector<const v1::Action*> winners;
  for (const v1::Action* a : plays)
    if (Wins(a->play().tile(), trick, trump)) winners.push_back(a);
  return Best(winners.empty() ? plays : winners, [&](const v1::Action& a) {
    return -((IsTrump(a.play().tile(), trump) ? 100 : 0) + Pips(a.play().tile()));
  });
}

const v1::Action& Choose(const MatchState& state, const v1::Observation& obs) {
  return state.game == v1::GameConfig::kMoon ? *ChooseMoon(state, obs) : *ChooseLine(state, obs);
}

// -- stopping on a signal --------------------------------------------------------------------

std::atomic<bool> g_stopping{false};
std::mutex g_stop_mutex;
std::condition_variable g_stop_cv;
grpc::ClientContext* g_context = nullptr;  // the stream's context, to cancel it (under g_stop_mutex)

// SIGINT and SIGTERM are blocked in every thread (gRPC's included) and taken here, where it
// is safe to cancel the stream and wake the reconnection wait.
void WaitForSignals(sigset_t signals) {
  int signal_number = 0;
  sigwait(&signals, &signal_number);
  Log(std::string(signal_number == SIGINT ? "SIGINT" : "SIGTERM") + ": stopping");
  std::lock_guard<std::mutex> lock(g_stop_mutex);
  g_stopping = true;
  if (g_context) g_context->TryCancel();
  g_stop_cv.notify_all();
}

// -- the stream ------------------------------------------------------------------------------

enum class Ending { kRetry, kFatal, kStopped };

class Bot {
 public:
  explicit Bot(Config config) : config_(std::move(config)) {}

  int Run() {
    double delay = 0.2;
    std::mt19937 rng(std::random_device{}());
    while (!g_stopping) {
      bool welcomed = false;
      Ending ending = Connect(&welcomed);
      if (ending == Ending::kStopped || g_stopping) break;
      if (ending == Ending::kFatal) {
        Log("giving up: " + fatal_);
        return 1;
      }
      if (welcomed) delay = 0.2;  // it was up: retry soon, within the referee's grace window
      double wait = delay * std::uniform_real_distribution<double>(0.5, 1.5)(rng);
      Log("reconnecting in " + std::to_string(wait).substr(0, 3) + " s");
      std::unique_lock<std::mutex> lock(g_stop_mutex);
      g_stop_cv.wait_for(lock, std::chrono::duration<double>(wait), [] { return g_stopping.load(); });
      delay = std::min(delay * 2, 2.0);
    }
    return 0;
  }

 private:
  using Stream = grpc::ClientReaderWriter<v1::BotMessage, v1::RefereeMessage>;

  // One stream: returns when it ends, saying whether to reconnect.
  Ending Connect(bool* welcomed) {
    Log("connecting to " + config_.server);
    // A fresh channel for each attempt: a channel that failed to connect waits out gRPC's own
    // reconnection backoff (up to minutes), longer than the referee's grace window.
    grpc::ChannelArguments args;
    args.SetInt(GRPC_ARG_INITIAL_RECONNECT_BACKOFF_MS, 200);
    args.SetInt(GRPC_ARG_MAX_RECONNECT_BACKOFF_MS, 2000);
    auto channel =
        grpc::CreateCustomChannel(config_.server, grpc::InsecureChannelCredentials(), args);
    auto stub = v1::BotService::NewStub(channel);
    grpc::ClientContext context;
    {
      std::lock_guard<std::mutex> lock(g_stop_mutex);
      if (g_stopping) return Ending::kStopped;
      g_context = &context;
    }
    std::unique_ptr<Stream> stream = stub->Play(&context);
    stream_ = stream.get();
    v1::BotMessage hello;
    v1::Hello* h = hello.mutable_hello();
    h->set_name(config_.name);
    h->set_token(config_.token);
    for (const char* game : kGames) h->add_games(game);
    h->set_protocol_version(kProtocolVersion);
    h->set_client(kClient);
    stream->Write(hello);

    v1::RefereeMessage message;
    while (fatal_.empty() && stream->Read(&message)) {
      if (!*welcomed) {
        if (message.message_case() == v1::RefereeMessage::kWelcome) {
          *welcomed = true;
          std::string games;
          for (const std::string& g : message.welcome().games()) games += (games.empty() ? "" : ", ") + g;
          Log("welcomed by " + config_.server + " (games: " + games + ")");
        } else if (message.message_case() == v1::RefereeMessage::kError) {
          OnError(message.error());
          break;
        }
        continue;
      }
      Dispatch(message);
    }
    if (!fatal_.empty()) context.TryCancel();
    grpc::Status status = stream->Finish();
    {
      std::lock_guard<std::mutex> lock(g_stop_mutex);
      g_context = nullptr;
    }
    stream_ = nullptr;
    if (g_stopping) return Ending::kStopped;
    if (!fatal_.empty()) return Ending::kFatal;
    switch (status.error_code()) {
      case grpc::StatusCode::UNAUTHENTICATED:
      case grpc::StatusCode::PERMISSION_DENIED:
      case grpc::StatusCode::INVALID_ARGUMENT:
      case grpc::StatusCode::UNIMPLEMENTED:
      case grpc::StatusCode::FAILED_PRECONDITION:
      case grpc::StatusCode::ABORTED:  // another process of this bot took over its seats
        fatal_ = "status " + std::to_string(status.error_code()) + ": " + status.error_message();
        return Ending::kFatal;
      default:
        Log("stream lost (status " + std::to_string(status.error_code()) + ": " +
            status.error_message() + ")");
        return Ending::kRetry;
    }
  }

  void OnError(const v1::Error& error) {
    std::string code = EnumName<v1::ErrorCode>(error.code(), v1::ErrorCode_IsValid,
                                               [](v1::ErrorCode c) { return v1::ErrorCode_Name(c); },
                                               "ERROR_CODE_");
    std::string where = error.match_id().empty() ? "" : " (match " + error.match_id() + ")";
    Log("referee error " + code + ": " + error.message() + where);
    // errors that would come back on every retry: give up instead of reconnecting
    if (code == "UNAUTHENTICATED" || code == "BAD_HELLO" || code == "UNKNOWN_GAME" ||
        code == "ALREADY_CONNECTED")
      fatal_ = code + ": " + error.message();
  }

  void Dispatch(const v1::RefereeMessage& message) {
    switch (message.message_case()) {
      case v1::RefereeMessage::kBatch:
        for (const v1::RefereeMessage& inner : message.batch().messages()) Dispatch(inner);
        return;
      case v1::RefereeMessage::kError:
        OnError(message.error());
        return;
      case v1::RefereeMessage::kMatchStart:
        OnMatchStart(message.match_start());
        return;
      case v1::RefereeMessage::kRequest:
        OnRequest(message.request());
        return;
      case v1::RefereeMessage::kHandEnd:
        OnHandEnd(message.hand_end());
        return;
      case v1::RefereeMessage::kFault:
        OnFault(message.fault());
        return;
      case v1::RefereeMessage::kMatchEnd:
        OnMatchEnd(message.match_end());
        return;
      default:  // a Welcome again, a stand-alone Event (not sent since version 2), or newer
        return;
    }
  }

  MatchState* Find(const std::string& id) {
    auto it = matches_.find(id);
    return it == matches_.end() ? nullptr : &it->second;
  }

  void OnMatchStart(const v1::MatchStart& start) {
    MatchState& state = matches_[start.match_id()];
    state = MatchState{};
    state.id = start.match_id();
    state.game = start.game().game_case();
    state.seat = start.seat();
    if (start.resumed() && start.has_snapshot()) {  // the snapshot is whole, history included
      state.deal = start.snapshot().deal();
      for (const v1::Step& step : start.snapshot().history()) state.Record(step);
    }
    static const char* const names[] = {"?", "moon", "passing", "straight", "doubles"};
    int game = static_cast<int>(state.game);
    Log("match start " + state.id + ": " + names[game >= 0 && game <= 4 ? game : 0] + " seat " +
        std::to_string(state.seat) + (start.resumed() ? " (resumed)" : ""));
  }

  void OnRequest(const v1::ActionRequest& request) {
    MatchState* state = Find(request.match_id());
    if (state == nullptr) return;  // a match this process never saw start
    state->OnEvents(request.events());
    if (request.observation().legal_actions().empty()) return;
    v1::BotMessage reply;
    v1::ActionReply* r = reply.mutable_reply();
    r->set_match_id(request.match_id());
    r->set_turn(request.turn());
    *r->mutable_action() = Choose(*state, request.observation());
    stream_->Write(reply);
  }

  void OnHandEnd(const v1::HandEnd& hand) {
    MatchState* state = Find(hand.match_id());
    if (state == nullptr) return;
    state->OnEvents(hand.events());
    std::string kind = EnumName<v1::HandEndKind>(
        hand.end(), v1::HandEndKind_IsValid, [](v1::HandEndKind k) { return v1::HandEndKind_Name(k); },
        "HAND_END_KIND_");
    Log("match " + state->id + ": deal " + std::to_string(hand.deal()) + " ends " + kind +
        ", points " + Join(hand.points()) + ", scores " + Join(hand.scores()) + " (" +
        std::to_string(state->history.size()) + " steps seen)");
  }

  void OnFault(const v1::Fault& fault) {
    MatchState* state = Find(fault.match_id());
    if (state == nullptr) return;
    state->OnEvents(fault.events());
    std::string kind = EnumName<v1::FaultKind>(
        fault.kind(), v1::FaultKind_IsValid, [](v1::FaultKind k) { return v1::FaultKind_Name(k); },
        "FAULT_KIND_");
    Log("match " + state->id + ": FAULT " + kind + " at turn " + std::to_string(fault.turn()) +
        ": " + fault.reason() + " (strikes " + std::to_string(fault.strikes()) +
        (fault.forfeited() ? ", forfeited)" : ")"));
  }

  void OnMatchEnd(const v1::MatchEnd& end) {
    MatchState* state = Find(end.match_id());
    if (state == nullptr) return;
    state->OnEvents(end.events());
    const v1::MatchResult& r = end.result();
    // NORMAL, FORFEIT, VOID, ABORTED, ADJUDICATED, or a value newer than this bot
    std::string termination = TerminationName(r.termination());
    std::string winner = r.winner() == -1 ? "no winner" : "side " + std::to_string(r.winner()) + " wins";
    if (r.winner() != -1 && static_cast<int>(state->seat) < r.side_of_seat_size())
      winner += r.side_of_seat(static_cast<int>(state->seat)) == static_cast<uint32_t>(r.winner())
                    ? " (us)"
                    : " (not us)";
    Log("match end " + state->id + ": " + termination + ", " + winner + ", scores " +
        Join(r.scores()) + (r.detail().empty() ? "" : ": " + r.detail()));
    matches_.erase(end.match_id());
  }

  template <typename Numbers>
  static std::string Join(const Numbers& numbers) {
    std::string text;
    for (auto n : numbers) text += (text.empty() ? "" : "/") + std::to_string(n);
    return text;
  }

  Config config_;
  Stream* stream_ = nullptr;
  std::map<std::string, MatchState> matches_;
  std::string fatal_;
};

}  // namespace

int main(int argc, char** argv) {
  Config config = ParseArgs(argc, argv);
  g_name = config.name;
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGINT);
  sigaddset(&signals, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);  // before any thread starts, gRPC's included
  std::thread(WaitForSignals, signals).detach();
  int status = Bot(std::move(config)).Run();
  Log("stopped");
  return status;
}
