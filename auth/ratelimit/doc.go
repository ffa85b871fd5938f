// Package ratelimit counts requests per caller: a budget per fixed window (Limiter, with the
// in-memory Memory), a per-second burst allowance (Burst) and a cap on requests in flight
// (Concurrency).
//
// Behaviours chosen where the specification is silent:
//
//   - Budgets use fixed windows aligned to multiples of the window length since Go's zero
//     time, so the default one-hour window starts on every whole UTC hour. Every replica, and
//     a database-backed Limiter, computes the same window from the same clock; a caller can
//     spend up to twice its budget across one window boundary, the usual price of fixed
//     windows.
//   - A request refused by the budget is not counted: Remaining stays 0 and the count never
//     exceeds the limit.
//   - The burst allowance is a token bucket holding up to rate tokens and refilling rate
//     tokens per second; one request takes one token. Burst.AllowRate and
//     Concurrency.AcquireUpTo take a caller's own rate and cap, so callers with their own
//     limits share one Burst and one Concurrency.
//   - Burst and Concurrency keep their state in process: they protect one server, not a
//     cluster. Idle callers' state is dropped, so memory follows the number of active callers.
package ratelimit
