// Physical quantities as types, so that joules and millijoules (or watts and
// milliwatts) cannot be mixed up silently. Modelled on std::chrono::duration:
// a quantity is a count of some unit of one dimension; conversions that can
// lose precision (to a coarser integer unit) need an explicit quantity_cast.
#pragma once

#include <chrono>
#include <cmath>
#include <compare>
#include <cstdint>
#include <ratio>
#include <type_traits>

namespace zeus {

namespace dim {
struct Energy {};
struct Power {};
struct Frequency {};
struct Temperature {};
}  // namespace dim

template <class Dim, class Rep, class Unit = std::ratio<1>>
class Quantity;

namespace detail {
template <class T>
struct is_quantity : std::false_type {};
template <class D, class R, class U>
struct is_quantity<Quantity<D, R, U>> : std::true_type {};

// Converting From -> To is exact when To is floating point, or when both are
// integers and To's unit divides From's unit (e.g. J -> mJ).
template <class FromRep, class FromUnit, class ToRep, class ToUnit>
inline constexpr bool lossless_v =
    std::is_floating_point_v<ToRep> ||
    (!std::is_floating_point_v<FromRep> && std::ratio_divide<FromUnit, ToUnit>::den == 1);
}  // namespace detail

template <class To, class D, class R, class U>
constexpr To quantity_cast(const Quantity<D, R, U>& q);

template <class Dim, class Rep, class Unit>
class Quantity {
  public:
    using dimension = Dim;
    using rep = Rep;
    using unit = Unit;

    constexpr Quantity() = default;
    constexpr explicit Quantity(Rep count) : count_(count) {}

    template <class R2, class U2>
        requires detail::lossless_v<R2, U2, Rep, Unit>
    constexpr Quantity(const Quantity<Dim, R2, U2>& other)  // NOLINT(google-explicit-constructor)
        : count_(quantity_cast<Quantity>(other).count()) {}

    [[nodiscard]] constexpr Rep count() const { return count_; }

    constexpr Quantity operator-() const { return Quantity(-count_); }
    constexpr Quantity& operator+=(const Quantity& o) {
        count_ += o.count_;
        return *this;
    }
    constexpr Quantity& operator-=(const Quantity& o) {
        count_ -= o.count_;
        return *this;
    }
    friend constexpr Quantity operator+(Quantity a, const Quantity& b) { return a += b; }
    friend constexpr Quantity operator-(Quantity a, const Quantity& b) { return a -= b; }
    friend constexpr Quantity operator*(Quantity a, Rep k) { return Quantity(a.count_ * k); }
    friend constexpr Quantity operator*(Rep k, Quantity a) { return Quantity(a.count_ * k); }
    friend constexpr Quantity operator/(Quantity a, Rep k) { return Quantity(a.count_ / k); }
    friend constexpr auto operator<=>(const Quantity&, const Quantity&) = default;

  private:
    Rep count_{};
};

template <class To, class D, class R, class U>
constexpr To quantity_cast(const Quantity<D, R, U>& q) {
    static_assert(detail::is_quantity<To>::value, "quantity_cast target must be a Quantity");
    static_assert(std::is_same_v<typename To::dimension, D>, "cannot convert between dimensions");
    using factor = std::ratio_divide<U, typename To::unit>;
    using ToRep = typename To::rep;
    using Common = std::common_type_t<ToRep, R, std::intmax_t>;
    if constexpr (std::is_floating_point_v<Common>) {
        return To(static_cast<ToRep>(static_cast<Common>(q.count()) * static_cast<Common>(factor::num) /
                                     static_cast<Common>(factor::den)));
    } else {
        return To(static_cast<ToRep>(static_cast<Common>(q.count()) * factor::num / factor::den));
    }
}

// Comparisons across units of one dimension go through double, which is exact
// for every value a GPU counter can hold in practice (< 2^53).
template <class D, class R1, class U1, class R2, class U2>
constexpr bool same_value(const Quantity<D, R1, U1>& a, const Quantity<D, R2, U2>& b) {
    return quantity_cast<Quantity<D, double>>(a).count() == quantity_cast<Quantity<D, double>>(b).count();
}

// Energy
using Millijoules = Quantity<dim::Energy, std::int64_t, std::milli>;
using Microjoules = Quantity<dim::Energy, std::int64_t, std::micro>;
using Joules = Quantity<dim::Energy, double>;
// Power
using Milliwatts = Quantity<dim::Power, std::int64_t, std::milli>;
using Microwatts = Quantity<dim::Power, std::int64_t, std::micro>;
using Watts = Quantity<dim::Power, double>;
// Clock frequency
using Megahertz = Quantity<dim::Frequency, std::int64_t, std::mega>;
// Temperature in degrees Celsius (an offset scale: add/subtract only).
using Celsius = Quantity<dim::Temperature, double>;

// Time is std::chrono; Seconds is the floating-point second used for results.
using Seconds = std::chrono::duration<double>;

// Power x time = energy, energy / time = power.
template <class R, class U, class TR, class TP>
constexpr Joules operator*(const Quantity<dim::Power, R, U>& p, const std::chrono::duration<TR, TP>& t) {
    return Joules(quantity_cast<Watts>(p).count() * std::chrono::duration_cast<Seconds>(t).count());
}
template <class R, class U, class TR, class TP>
constexpr Joules operator*(const std::chrono::duration<TR, TP>& t, const Quantity<dim::Power, R, U>& p) {
    return p * t;
}
template <class R, class U, class TR, class TP>
constexpr Watts operator/(const Quantity<dim::Energy, R, U>& e, const std::chrono::duration<TR, TP>& t) {
    return Watts(quantity_cast<Joules>(e).count() / std::chrono::duration_cast<Seconds>(t).count());
}

inline namespace literals {
constexpr Millijoules operator""_mJ(unsigned long long v) { return Millijoules(static_cast<std::int64_t>(v)); }
constexpr Joules operator""_J(long double v) { return Joules(static_cast<double>(v)); }
constexpr Joules operator""_J(unsigned long long v) { return Joules(static_cast<double>(v)); }
constexpr Milliwatts operator""_mW(unsigned long long v) { return Milliwatts(static_cast<std::int64_t>(v)); }
constexpr Watts operator""_W(long double v) { return Watts(static_cast<double>(v)); }
constexpr Watts operator""_W(unsigned long long v) { return Watts(static_cast<double>(v)); }
constexpr Megahertz operator""_MHz(unsigned long long v) { return Megahertz(static_cast<std::int64_t>(v)); }
}  // namespace literals

}  // namespace zeus
