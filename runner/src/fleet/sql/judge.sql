-- The fleet's decisions, computed inside PostgreSQL from the stored counts, so that no worker
-- computes (and could forge) them. Only CREATE OR REPLACE FUNCTION statements: the schema
-- migration includes this file and sets owners and privileges.
--
-- Each function mirrors Rust code and must give what it gives:
--   fleet_sprt_llr      stats::llr (stats/src/sprt.rs), with stats::mle (secular,
--                       mle_expected, mle_t_value, fixed_point, two_point_starts) and stats::elo
--                       (logistic_score, t_from_nelo), for 5 pentanomial counts
--   fleet_race_drops    one look of runner::sweep::racing::Race::update, with
--                       stats::ScoreMoments::from_penta; the critical values are
--                       RaceConfig::criticals (normal quantiles: computed in Rust)
--   fleet_spsa_begin    runner::tune::spsa::Spsa::begin_with (the random numbers are
--                       Spsa::draws, the parameters Spsa::judge_params: computed in Rust)
--   fleet_spsa_update   runner::tune::spsa::Spsa::update
-- A change to any of those Rust functions must be made here too: runner/tests/fleet_judge_sql.rs
-- compares both on seeded random inputs and fails on drift. The fleet_judge_* functions are
-- helpers of this file. Floating-point operations are written in the order Rust performs them
-- (PostgreSQL's float8 is IEEE double, its ln, sqrt and power are the C library's), so most
-- results are bit-identical to Rust's; ln_1p, which PostgreSQL lacks, is computed with a
-- compensated ln, a few units in the last place from Rust's. The SPSA functions are exact.

-- ln(1 + x c_i) as stats::mle::Tilted::log_ratio takes it: ln_1p(w) for |w| < 0.5, else ln d_i.
-- ln_1p is ln(u) * w / (u - 1) with u = 1 + w (exact to a few units in the last place). Not
-- STRICT, so that the planner inlines it.
CREATE OR REPLACE FUNCTION fleet_judge_log_ratio(x float8, c float8, d float8)
RETURNS float8
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
    SELECT CASE
        WHEN abs(x * c) >= 0.5::float8 THEN ln(d)
        WHEN 1::float8 + x * c = 1::float8 THEN x * c
        ELSE ln(1::float8 + x * c) * (x * c) / ((1::float8 + x * c) - 1::float8)
    END
$$;

-- The MLEs for 5 outcomes (pentanomial counts: values 0, 1/4, 1/2, 3/4, 1), with scalars
-- instead of arrays and whole sums in one expression (PL/pgSQL's cost is per statement), in
-- Rust's order of operations.

-- The root of sum_i q_i c_i / (1 + x c_i) = 0 (stats::mle::secular): ok is false where Rust
-- returns an error; d_i are the denominators 1 + x c_i.
CREATE OR REPLACE FUNCTION fleet_judge_secular5(
    c1 float8, c2 float8, c3 float8, c4 float8, c5 float8,
    q1 float8, q2 float8, q3 float8, q4 float8, q5 float8,
    OUT ok boolean, OUT x float8,
    OUT d1 float8, OUT d2 float8, OUT d3 float8, OUT d4 float8, OUT d5 float8)
LANGUAGE plpgsql IMMUTABLE STRICT PARALLEL SAFE AS $$
DECLARE
    two_eps CONSTANT float8 := 4.440892098500626e-16;
    min_pos CONSTANT float8 := 2.2250738585072014e-308;
    cmin float8 := least(c1, c2, c3, c4, c5);
    cmax float8 := greatest(c1, c2, c3, c4, c5);
    f0 float8;
    pole float8;
    pole_c float8;
    half float8;
    f_half float8;
    x0 float8;
    sgn float8;
    b1 float8 := 1;
    b2 float8 := 1;
    b3 float8 := 1;
    b4 float8 := 1;
    b5 float8 := 1;
    lo float8 := 0;
    hi float8;
    y float8;
    sy float8;
    step_before float8;
    step float8;
    f float8;
    fp float8;
    nxt float8;
    tol float8;
    probe float8;
    fprobe float8;
    done boolean := false;
BEGIN
    ok := false;
    IF NOT (q1 > 0 AND q1 < 'Infinity'::float8 AND q2 > 0 AND q2 < 'Infinity'::float8
        AND q3 > 0 AND q3 < 'Infinity'::float8 AND q4 > 0 AND q4 < 'Infinity'::float8
        AND q5 > 0 AND q5 < 'Infinity'::float8
        AND cmin > '-Infinity'::float8 AND cmax < 'Infinity'::float8 AND cmin < 0 AND cmax > 0)
    THEN
        RETURN;
    END IF;
    ok := true;
    f0 := q1 * c1 + q2 * c2 + q3 * c3 + q4 * c4 + q5 * c5;
    IF f0 = 0 THEN
        x := 0;
        d1 := 1; d2 := 1; d3 := 1; d4 := 1; d5 := 1;
        RETURN;
    END IF;
    IF f0 < 0 THEN
        pole := -1::float8 / cmax;
        pole_c := cmax;
    ELSE
        pole := -1::float8 / cmin;
        pole_c := cmin;
    END IF;
    half := 0.5::float8 * pole;
    f_half := q1 * c1 / (1::float8 + half * c1) + q2 * c2 / (1::float8 + half * c2)
        + q3 * c3 / (1::float8 + half * c3) + q4 * c4 / (1::float8 + half * c4)
        + q5 * c5 / (1::float8 + half * c5);
    IF (f0 < 0) = (f_half < 0) AND f_half <> 0 THEN
        b1 := CASE WHEN c1 = pole_c THEN 0::float8 ELSE (pole_c - c1) / pole_c END;
        b2 := CASE WHEN c2 = pole_c THEN 0::float8 ELSE (pole_c - c2) / pole_c END;
        b3 := CASE WHEN c3 = pole_c THEN 0::float8 ELSE (pole_c - c3) / pole_c END;
        b4 := CASE WHEN c4 = pole_c THEN 0::float8 ELSE (pole_c - c4) / pole_c END;
        b5 := CASE WHEN c5 = pole_c THEN 0::float8 ELSE (pole_c - c5) / pole_c END;
        x0 := pole;
        sgn := -sign(pole);
    ELSE
        x0 := 0;
        sgn := sign(pole);
    END IF;
    hi := abs(half);
    IF f_half = 0 THEN
        y := hi;
    ELSE
        y := 0.5::float8 * hi;
        step_before := hi - lo;
        step := step_before;
        FOR it IN 1..600 LOOP
            -- A zero denominator (Rust: an infinite term) makes f NULL: the root is y then.
            f := sgn * (q1 * c1 * (1::float8 / nullif(b1 + sgn * y * c1, 0))
                + q2 * c2 * (1::float8 / nullif(b2 + sgn * y * c2, 0))
                + q3 * c3 * (1::float8 / nullif(b3 + sgn * y * c3, 0))
                + q4 * c4 * (1::float8 / nullif(b4 + sgn * y * c4, 0))
                + q5 * c5 * (1::float8 / nullif(b5 + sgn * y * c5, 0)));
            IF f IS NULL OR f = 0 OR abs(f) >= 'Infinity'::float8 THEN
                done := true;
                EXIT;
            END IF;
            fp := -(q1 * c1 * c1 * (1::float8 / (b1 + sgn * y * c1)) * (1::float8 / (b1 + sgn * y * c1)))
                - q2 * c2 * c2 * (1::float8 / (b2 + sgn * y * c2)) * (1::float8 / (b2 + sgn * y * c2))
                - q3 * c3 * c3 * (1::float8 / (b3 + sgn * y * c3)) * (1::float8 / (b3 + sgn * y * c3))
                - q4 * c4 * c4 * (1::float8 / (b4 + sgn * y * c4)) * (1::float8 / (b4 + sgn * y * c4))
                - q5 * c5 * c5 * (1::float8 / (b5 + sgn * y * c5)) * (1::float8 / (b5 + sgn * y * c5));
            IF f > 0 THEN lo := y; ELSE hi := y; END IF;
            -- Newton's step if it stays in the bracket and the step before last halved, else
            -- the bracket's midpoint.
            nxt := CASE WHEN y - f / fp > lo AND y - f / fp < hi
                AND abs(2::float8 * f) <= abs(step_before * fp)
                THEN y - f / fp ELSE 0.5::float8 * (lo + hi) END;
            step_before := step;
            tol := two_eps * greatest(abs(y), abs(nxt), min_pos);
            IF hi - lo <= tol THEN
                y := nxt;
                done := true;
                EXIT;
            END IF;
            IF abs(nxt - y) <= tol THEN
                -- A tiny step is convergence only if f changes sign within two steps.
                probe := y + 2::float8 * (nxt - y);
                sy := sgn * probe;
                fprobe := sgn * (q1 * c1 * (1::float8 / nullif(b1 + sy * c1, 0))
                    + q2 * c2 * (1::float8 / nullif(b2 + sy * c2, 0))
                    + q3 * c3 * (1::float8 / nullif(b3 + sy * c3, 0))
                    + q4 * c4 * (1::float8 / nullif(b4 + sy * c4, 0))
                    + q5 * c5 * (1::float8 / nullif(b5 + sy * c5, 0)));
                IF fprobe IS NULL THEN
                    -- A zero denominator (it is +0): Rust's sum has +inf terms where c > 0,
                    -- -inf terms where c < 0, and is NaN (not > 0) if it has both.
                    fprobe := sgn * CASE
                        WHEN (b1 + sy * c1 = 0 AND c1 > 0) OR (b2 + sy * c2 = 0 AND c2 > 0)
                            OR (b3 + sy * c3 = 0 AND c3 > 0) OR (b4 + sy * c4 = 0 AND c4 > 0)
                            OR (b5 + sy * c5 = 0 AND c5 > 0)
                        THEN 'Infinity'::float8 ELSE 0::float8 END;
                    IF (b1 + sy * c1 = 0 AND c1 < 0) OR (b2 + sy * c2 = 0 AND c2 < 0)
                        OR (b3 + sy * c3 = 0 AND c3 < 0) OR (b4 + sy * c4 = 0 AND c4 < 0)
                        OR (b5 + sy * c5 = 0 AND c5 < 0)
                    THEN
                        fprobe := CASE WHEN fprobe = 0 THEN -sgn * 'Infinity'::float8
                            ELSE 'NaN'::float8 END;
                    END IF;
                END IF;
                IF fprobe = 0 OR (fprobe > 0 AND fprobe <> 'NaN'::float8) <> (f > 0) THEN
                    y := nxt;
                    done := true;
                    EXIT;
                END IF;
                IF f > 0 THEN lo := greatest(lo, probe); ELSE hi := least(hi, probe); END IF;
                nxt := 0.5::float8 * (lo + hi);
            END IF;
            step := nxt - y;
            y := nxt;
        END LOOP;
        IF NOT done THEN
            y := 0.5::float8 * (lo + hi);
        END IF;
    END IF;
    sy := sgn * y;
    x := x0 + sy;
    d1 := b1 + sy * c1;
    d2 := b2 + sy * c2;
    d3 := b3 + sy * c3;
    d4 := b4 + sy * c4;
    d5 := b5 + sy * c5;
END
$$;

-- The fixed-point iteration for the t-value MLE from the start p (stats::mle::fixed_point): ok
-- is false where Rust gives None; p is the last distribution.
CREATE OR REPLACE FUNCTION fleet_judge_fixed_point5(
    q1 float8, q2 float8, q3 float8, q4 float8, q5 float8, ref float8, t float8,
    INOUT p1 float8, INOUT p2 float8, INOUT p3 float8, INOUT p4 float8, INOUT p5 float8,
    OUT ok boolean, OUT x float8,
    OUT c1 float8, OUT c2 float8, OUT c3 float8, OUT c4 float8, OUT c5 float8,
    OUT d1 float8, OUT d2 float8, OUT d3 float8, OUT d4 float8, OUT d5 float8)
LANGUAGE plpgsql IMMUTABLE STRICT PARALLEL SAFE AS $$
DECLARE
    mu float8;
    var float8;
    sigma float8;
    chg float8;
    r record;
    have boolean := false;
BEGIN
    ok := false;
    FOR it IN 1..500 LOOP
        mu := 0.25::float8 * p2 + 0.5::float8 * p3 + 0.75::float8 * p4 + p5;
        var := p1 * (0::float8 - mu) * (0::float8 - mu) + p2 * (0.25::float8 - mu) * (0.25::float8 - mu)
            + p3 * (0.5::float8 - mu) * (0.5::float8 - mu) + p4 * (0.75::float8 - mu) * (0.75::float8 - mu)
            + p5 * (1::float8 - mu) * (1::float8 - mu);
        sigma := sqrt(var);
        IF NOT (sigma > 0 AND sigma < 'Infinity'::float8) THEN
            RETURN;
        END IF;
        -- b_i = a_i - ref - t sigma (1 + ((mu - a_i) / sigma)^2) / 2
        c1 := 0::float8 - ref - t * sigma * (1::float8 + ((mu - 0::float8) / sigma) * ((mu - 0::float8) / sigma)) / 2::float8;
        c2 := 0.25::float8 - ref - t * sigma * (1::float8 + ((mu - 0.25::float8) / sigma) * ((mu - 0.25::float8) / sigma)) / 2::float8;
        c3 := 0.5::float8 - ref - t * sigma * (1::float8 + ((mu - 0.5::float8) / sigma) * ((mu - 0.5::float8) / sigma)) / 2::float8;
        c4 := 0.75::float8 - ref - t * sigma * (1::float8 + ((mu - 0.75::float8) / sigma) * ((mu - 0.75::float8) / sigma)) / 2::float8;
        c5 := 1::float8 - ref - t * sigma * (1::float8 + ((mu - 1::float8) / sigma) * ((mu - 1::float8) / sigma)) / 2::float8;
        r := fleet_judge_secular5(c1, c2, c3, c4, c5, q1, q2, q3, q4, q5);
        IF NOT r.ok THEN
            RETURN;
        END IF;
        chg := greatest(0::float8, abs(p1 - q1 / r.d1), abs(p2 - q2 / r.d2), abs(p3 - q3 / r.d3),
            abs(p4 - q4 / r.d4), abs(p5 - q5 / r.d5));
        p1 := q1 / r.d1;
        p2 := q2 / r.d2;
        p3 := q3 / r.d3;
        p4 := q4 / r.d4;
        p5 := q5 / r.d5;
        x := r.x;
        d1 := r.d1; d2 := r.d2; d3 := r.d3; d4 := r.d4; d5 := r.d5;
        have := true;
        -- With t = 0 the b_i do not depend on p: Rust's next round repeats this one exactly and
        -- stops (change 0).
        EXIT WHEN chg <= 1e-15::float8 OR t = 0;
    END LOOP;
    mu := 0.25::float8 * p2 + 0.5::float8 * p3 + 0.75::float8 * p4 + p5;
    var := p1 * (0::float8 - mu) * (0::float8 - mu) + p2 * (0.25::float8 - mu) * (0.25::float8 - mu)
        + p3 * (0.5::float8 - mu) * (0.5::float8 - mu) + p4 * (0.75::float8 - mu) * (0.75::float8 - mu)
        + p5 * (1::float8 - mu) * (1::float8 - mu);
    IF have AND sqrt(var) > 0 AND abs((mu - ref) / sqrt(var) - t) < 1e-10::float8 THEN
        ok := true;
    END IF;
END
$$;

-- The MLE with expectation s (stats::mle::mle_expected); raises where Rust returns an error
-- (s not strictly between 0 and 1, or the constraint missed by 1e-9 or more).
CREATE OR REPLACE FUNCTION fleet_judge_mle_expected5(
    phat float8[], s float8, OUT x float8, OUT c float8[], OUT d float8[])
LANGUAGE plpgsql IMMUTABLE STRICT PARALLEL SAFE AS $$
DECLARE
    r record;
    mu float8;
BEGIN
    c := ARRAY[0::float8 - s, 0.25::float8 - s, 0.5::float8 - s, 0.75::float8 - s, 1::float8 - s];
    r := fleet_judge_secular5(c[1], c[2], c[3], c[4], c[5],
        phat[1], phat[2], phat[3], phat[4], phat[5]);
    IF NOT r.ok THEN
        RAISE EXCEPTION 'secular equation without a root (expectation %)', s;
    END IF;
    x := r.x;
    d := ARRAY[r.d1, r.d2, r.d3, r.d4, r.d5];
    mu := 0.25::float8 * (phat[2] / r.d2) + 0.5::float8 * (phat[3] / r.d3)
        + 0.75::float8 * (phat[4] / r.d4) + phat[5] / r.d5;
    IF NOT abs(mu - s) < 1e-9::float8 THEN
        RAISE EXCEPTION 'the expectation constraint % was not met (got %)', s, mu;
    END IF;
END
$$;

-- The MLE with t-value (mu - ref) / sigma = t (stats::mle::mle_t_value): the continuation in t
-- from the observations, then the fixed point from every two-outcome start, the most likely
-- solution winning (the last of equals, as Iterator::max_by); raises where Rust returns an
-- error.
--
-- One shortcut, which does not change the result: the starts are skipped when the
-- continuation's solution p* is provably the global maximum, since then no start can find a
-- more likely one (Rust keeps p*, or the same distribution found again, equal up to rounding).
-- The proof: p*_i = q_i / (1 + x b_i) is a stationary point of the Lagrangian
-- L(p) = f(p) - x h(p), f = sum q_i ln p_i, h = mu - ref - t sigma. Where L is concave on a
-- convex set R holding p* and every p with f(p) >= f(p*), p* maximizes L on R, so every
-- feasible p (h = 0) has f(p) = L(p) <= L(p*) = f(p*). sigma is concave, so L is concave
-- everywhere when x t >= 0 (this covers the convex cases: t = 0, or the observed t-value beyond
-- t). Otherwise R = {KL(q || p) <= K = KL(q || p*)} (convex), and the Hessian
-- -diag(q_i / p_i^2) + |x t| (a a' / sigma + g g' / (4 sigma^3)), |a_i|, |g_i| <= 1, is negative
-- definite on R when |x t| S (1 / s + 1 / (4 s^3)) <= 1 with S >= sum p_i^2 / q_i and
-- s <= sigma on R (Cauchy-Schwarz). On R each p_i lies in [q_i - sqrt(2 q_i K),
-- q_i + K + sqrt(2 q_i K + K^2)] (binary KL is at most K, and kl(q, p) >= (q - p)^2 /
-- (2 max(p, q))), which bounds S, and sigma^2 = sum_{i<j} p_i p_j (a_i - a_j)^2 at least that
-- sum for the lower ends. The test asks for 1/2 instead of 1 and enlarges K, against rounding.
-- The starts' roots in e are bracketed as Rust does (sign changes of g on the grid i / 64),
-- with g evaluated only next to the roots of the quadratic that g(e) = 0 squares to.
CREATE OR REPLACE FUNCTION fleet_judge_mle_t5(
    phat float8[], ref float8, t float8, OUT x float8, OUT c float8[], OUT d float8[])
LANGUAGE plpgsql IMMUTABLE STRICT PARALLEL SAFE AS $$
DECLARE
    q1 float8 := phat[1];
    q2 float8 := phat[2];
    q3 float8 := phat[3];
    q4 float8 := phat[4];
    q5 float8 := phat[5];
    mu float8;
    var float8;
    t_hat float8;
    t_now float8;
    t_next float8;
    step float8;
    p1 float8 := q1;
    p2 float8 := q2;
    p3 float8 := q3;
    p4 float8 := q4;
    p5 float8 := q5;
    r record;
    have boolean := false;
    best float8;
    ll float8;
    a float8;
    b float8;
    qa float8;
    qb float8;
    disc float8;
    hint float8;
    from_w int;
    to_w int;
    last_w int;
    glo float8;
    ghi float8;
    gmid float8;
    lo float8;
    hi float8;
    mid float8;
    e float8;
    s float8[];
    kl float8;
    u float8;
    bound float8;
    l1 float8;
    l2 float8;
    l3 float8;
    l4 float8;
    l5 float8;
BEGIN
    IF t IN ('Infinity', '-Infinity', 'NaN') THEN
        RAISE EXCEPTION 'no distribution with t-value % was found', t;
    END IF;
    mu := 0.25::float8 * q2 + 0.5::float8 * q3 + 0.75::float8 * q4 + q5;
    var := q1 * (0::float8 - mu) * (0::float8 - mu) + q2 * (0.25::float8 - mu) * (0.25::float8 - mu)
        + q3 * (0.5::float8 - mu) * (0.5::float8 - mu) + q4 * (0.75::float8 - mu) * (0.75::float8 - mu)
        + q5 * (1::float8 - mu) * (1::float8 - mu);
    IF NOT sqrt(var) > 0 THEN
        RAISE EXCEPTION 'no distribution with t-value % was found', t;
    END IF;
    t_now := (mu - ref) / sqrt(var);
    IF t_now IN ('Infinity', '-Infinity', 'NaN') THEN
        RAISE EXCEPTION 'no distribution with t-value % was found', t;
    END IF;
    t_hat := t_now;
    -- Continuation in t from the observations.
    step := t - t_now;
    LOOP
        t_next := CASE WHEN abs(t - t_now) <= abs(step) THEN t ELSE t_now + step END;
        r := fleet_judge_fixed_point5(q1, q2, q3, q4, q5, ref, t_next, p1, p2, p3, p4, p5);
        IF r.ok THEN
            IF t_next = t THEN
                have := true;
                EXIT;
            END IF;
            p1 := r.p1; p2 := r.p2; p3 := r.p3; p4 := r.p4; p5 := r.p5;
            t_now := t_next;
            step := step * 2::float8;
        ELSE
            step := step / 2::float8;
            EXIT WHEN abs(step) < 1e-9::float8;
        END IF;
    END LOOP;
    IF have THEN
        ll := (-q1) * fleet_judge_log_ratio(r.x, r.c1, r.d1) + (-q2) * fleet_judge_log_ratio(r.x, r.c2, r.d2)
            + (-q3) * fleet_judge_log_ratio(r.x, r.c3, r.d3) + (-q4) * fleet_judge_log_ratio(r.x, r.c4, r.d4)
            + (-q5) * fleet_judge_log_ratio(r.x, r.c5, r.d5);
        have := ll > '-Infinity'::float8 AND ll < 'Infinity'::float8;
        IF have THEN
            best := ll;
            x := r.x;
            c := ARRAY[r.c1, r.c2, r.c3, r.c4, r.c5];
            d := ARRAY[r.d1, r.d2, r.d3, r.d4, r.d5];
            -- The certificate (see above) that this is the global maximum.
            IF r.x * t >= 0 THEN
                RETURN;
            END IF;
            kl := greatest(-best, 0::float8) * 1.000001::float8 + 1e-12::float8;
            u := q1 + kl + sqrt(2::float8 * q1 * kl + kl * kl);
            bound := least(u, 1::float8) * least(u, 1::float8) / q1;
            u := q2 + kl + sqrt(2::float8 * q2 * kl + kl * kl);
            bound := bound + least(u, 1::float8) * least(u, 1::float8) / q2;
            u := q3 + kl + sqrt(2::float8 * q3 * kl + kl * kl);
            bound := bound + least(u, 1::float8) * least(u, 1::float8) / q3;
            u := q4 + kl + sqrt(2::float8 * q4 * kl + kl * kl);
            bound := bound + least(u, 1::float8) * least(u, 1::float8) / q4;
            u := q5 + kl + sqrt(2::float8 * q5 * kl + kl * kl);
            bound := bound + least(u, 1::float8) * least(u, 1::float8) / q5;
            l1 := greatest(q1 - sqrt(2::float8 * q1 * kl), 0::float8);
            l2 := greatest(q2 - sqrt(2::float8 * q2 * kl), 0::float8);
            l3 := greatest(q3 - sqrt(2::float8 * q3 * kl), 0::float8);
            l4 := greatest(q4 - sqrt(2::float8 * q4 * kl), 0::float8);
            l5 := greatest(q5 - sqrt(2::float8 * q5 * kl), 0::float8);
            -- sum_{i<j} l_i l_j (a_i - a_j)^2
            var := 0.0625::float8 * (l1 * l2 + l2 * l3 + l3 * l4 + l4 * l5)
                + 0.25::float8 * (l1 * l3 + l2 * l4 + l3 * l5)
                + 0.5625::float8 * (l1 * l4 + l2 * l5) + l1 * l5;
            IF var > 0 AND abs(r.x * t) * bound
                * (1::float8 / sqrt(var) + 1::float8 / (4::float8 * var * sqrt(var))) <= 0.5::float8
            THEN
                RETURN;
            END IF;
        END IF;
    END IF;
    -- The starts: two outcomes j < l, weight e on l, with t-value t.
    FOR j IN 1..5 LOOP
        FOR l IN j + 1..5 LOOP
            a := (j - 1)::float8 / 4::float8;
            b := (l - 1)::float8 / 4::float8;
            -- (a - ref + (b - a) e)^2 = t^2 (b - a)^2 e (1 - e): qa e^2 + qb e + (a - ref)^2 = 0.
            qa := (b - a) * (b - a) * (1::float8 + t * t);
            qb := 2::float8 * (a - ref) * (b - a) - t * t * (b - a) * (b - a);
            disc := sqrt(greatest(qb * qb - 4::float8 * qa * (a - ref) * (a - ref), 0::float8));
            last_w := 0;
            FOREACH hint IN ARRAY ARRAY[(-qb - disc) / (2::float8 * qa), (-qb + disc) / (2::float8 * qa)]
            LOOP
                CONTINUE WHEN NOT (hint > -1::float8 AND hint < 2::float8);
                from_w := greatest(floor(hint * 64::float8)::int - 1, 1, last_w + 1);
                to_w := least(floor(hint * 64::float8)::int + 1, 62);
                FOR w IN from_w..to_w LOOP
                    last_w := w;
                    lo := w::float8 / 64::float8;
                    hi := (w + 1)::float8 / 64::float8;
                    glo := (a + (b - a) * lo - ref) / ((b - a) * sqrt(lo * (1::float8 - lo))) - t;
                    ghi := (a + (b - a) * hi - ref) / ((b - a) * sqrt(hi * (1::float8 - hi))) - t;
                    CONTINUE WHEN (glo >= 0) = (ghi >= 0);
                    FOR i IN 1..60 LOOP
                        mid := 0.5::float8 * (lo + hi);
                        gmid := (a + (b - a) * mid - ref) / ((b - a) * sqrt(mid * (1::float8 - mid))) - t;
                        IF (gmid >= 0) = (glo >= 0) THEN
                            lo := mid;
                            glo := gmid;
                        ELSE
                            hi := mid;
                        END IF;
                    END LOOP;
                    e := 0.5::float8 * (lo + hi);
                    s := ARRAY[1e-3::float8 * q1, 1e-3::float8 * q2, 1e-3::float8 * q3,
                        1e-3::float8 * q4, 1e-3::float8 * q5];
                    s[j] := s[j] + 0.999::float8 * (1::float8 - e);
                    s[l] := s[l] + 0.999::float8 * e;
                    r := fleet_judge_fixed_point5(q1, q2, q3, q4, q5, ref, t, s[1], s[2], s[3], s[4], s[5]);
                    CONTINUE WHEN NOT r.ok;
                    ll := (-q1) * fleet_judge_log_ratio(r.x, r.c1, r.d1) + (-q2) * fleet_judge_log_ratio(r.x, r.c2, r.d2)
                        + (-q3) * fleet_judge_log_ratio(r.x, r.c3, r.d3) + (-q4) * fleet_judge_log_ratio(r.x, r.c4, r.d4)
                        + (-q5) * fleet_judge_log_ratio(r.x, r.c5, r.d5);
                    CONTINUE WHEN NOT (ll > '-Infinity'::float8 AND ll < 'Infinity'::float8);
                    IF NOT have OR ll >= best THEN
                        have := true;
                        best := ll;
                        x := r.x;
                        c := ARRAY[r.c1, r.c2, r.c3, r.c4, r.c5];
                        d := ARRAY[r.d1, r.d2, r.d3, r.d4, r.d5];
                    END IF;
                END LOOP;
            END LOOP;
        END LOOP;
    END LOOP;
    IF NOT have THEN
        RAISE EXCEPTION 'no distribution with t-value % was found', t;
    END IF;
END
$$;

-- stats::llr: the generalized LLR of elo1 against elo0 for counts in ascending order of score
-- (5 pentanomial counts [LL, LD, DD+WL, WD, WW]), model 'logistic' or 'normalized'. All-zero
-- counts give 0. Raises where Rust returns an error: fewer than 2 counts; a constrained MLE that
-- does not exist or is not found (a logistic bound whose expected score rounds to 1 or 0:
-- elo above about 6,600 or below about -123,000, where 10^(-elo/400) overflows; a normalized
-- bound no distribution meets, none of these within the +/-2000 SprtSpec allows). Also raises
-- where Rust would not: on 3 or more counts other than 5 (Rust also takes 3 trinomial counts;
-- the fleet stores pentanomials), a NULL, negative or non-finite count (Rust: u64), and a model
-- name other than the two.
CREATE OR REPLACE FUNCTION fleet_sprt_llr(counts float8[], elo0 float8, elo1 float8, model text)
RETURNS float8
LANGUAGE plpgsql IMMUTABLE STRICT PARALLEL SAFE AS $$
DECLARE
    k int := coalesce(cardinality(counts), 0);
    phat float8[];
    n float8 := 0;
    h0 record;
    h1 record;
    t0 float8;
    t1 float8;
BEGIN
    IF model NOT IN ('logistic', 'normalized') THEN
        RAISE EXCEPTION 'model must be logistic or normalized, got %', model;
    END IF;
    IF k < 2 THEN
        RAISE EXCEPTION 'an LLR needs at least two outcomes';
    END IF;
    IF k <> 5 THEN
        RAISE EXCEPTION 'fleet_sprt_llr takes 5 pentanomial counts, got %', k;
    END IF;
    IF array_position(counts, NULL) IS NOT NULL
        OR NOT (least(counts[1], counts[2], counts[3], counts[4], counts[5]) >= 0
            AND greatest(counts[1], counts[2], counts[3], counts[4], counts[5])
                < 'Infinity'::float8)
    THEN
        RAISE EXCEPTION 'counts must be non-negative numbers, got %', counts;
    END IF;
    IF greatest(counts[1], counts[2], counts[3], counts[4], counts[5]) = 0 THEN
        RETURN 0;
    END IF;
    -- Empty bins become EMPTY_BIN = 1e-3.
    phat := ARRAY[
        CASE WHEN counts[1] = 0 THEN 1e-3::float8 ELSE counts[1] END,
        CASE WHEN counts[2] = 0 THEN 1e-3::float8 ELSE counts[2] END,
        CASE WHEN counts[3] = 0 THEN 1e-3::float8 ELSE counts[3] END,
        CASE WHEN counts[4] = 0 THEN 1e-3::float8 ELSE counts[4] END,
        CASE WHEN counts[5] = 0 THEN 1e-3::float8 ELSE counts[5] END];
    n := phat[1] + phat[2] + phat[3] + phat[4] + phat[5];
    phat := ARRAY[phat[1] / n, phat[2] / n, phat[3] / n, phat[4] / n, phat[5] / n];
    IF model = 'logistic' THEN
        -- logistic_score(elo) = 1 / (1 + 10^(-elo / 400))
        h0 := fleet_judge_mle_expected5(phat,
            1::float8 / (1::float8 + power(10::float8, -elo0 / 400::float8)));
        h1 := fleet_judge_mle_expected5(phat,
            1::float8 / (1::float8 + power(10::float8, -elo1 / 400::float8)));
    ELSE
        -- t_from_nelo(elo) = elo / NELO_PER_T (800 / ln 10 = 347.43558552260146 as f64), times
        -- sqrt((k - 1) / 2) = sqrt(2) for a pair of games.
        t0 := elo0 / 347.43558552260146::float8 * sqrt(2::float8);
        t1 := elo1 / 347.43558552260146::float8 * sqrt(2::float8);
        h0 := fleet_judge_mle_t5(phat, 0.5, t0);
        h1 := fleet_judge_mle_t5(phat, 0.5, t1);
    END IF;
    RETURN n * (
        phat[1] * (fleet_judge_log_ratio(h0.x, h0.c[1], h0.d[1])
            - fleet_judge_log_ratio(h1.x, h1.c[1], h1.d[1]))
        + phat[2] * (fleet_judge_log_ratio(h0.x, h0.c[2], h0.d[2])
            - fleet_judge_log_ratio(h1.x, h1.c[2], h1.d[2]))
        + phat[3] * (fleet_judge_log_ratio(h0.x, h0.c[3], h0.d[3])
            - fleet_judge_log_ratio(h1.x, h1.c[3], h1.d[3]))
        + phat[4] * (fleet_judge_log_ratio(h0.x, h0.c[4], h0.d[4])
            - fleet_judge_log_ratio(h1.x, h1.c[4], h1.d[4]))
        + phat[5] * (fleet_judge_log_ratio(h0.x, h0.c[5], h0.d[5])
            - fleet_judge_log_ratio(h1.x, h1.c[5], h1.d[5])));
END
$$;

-- One look of runner::sweep::racing::Race::update on a race whose dropped points are `dropped`:
-- the points dropped now, each with the best point (0-based indices) and its z (f64::MAX,
-- 1.7976931348623157e308, for an infinite z), in ascending order of point. `counts` are the n
-- pentanomials [LL, LD, DD+WL, WD, WW] one point after the other; `crit[k]` is the critical
-- value with k active points (RaceConfig::criticals(n)[k]; crit[1] is not used). No rows when
-- fewer than 2 points are active or the counts are not 5 per point (Rust does nothing then).
CREATE OR REPLACE FUNCTION fleet_race_drops(
    counts float8[], dropped boolean[], min_pairs bigint, crit float8[])
RETURNS TABLE(point int, best int, z float8)
LANGUAGE plpgsql IMMUTABLE STRICT PARALLEL SAFE AS $$
DECLARE
    n int := coalesce(cardinality(dropped), 0);
    k int := 0;
    has boolean[];
    mean float8[];
    se float8[];
    trials float8;
    mu float8;
    var float8;
    cv float8;
    top int := -1;
    mb float8;
    sb float8;
    diff float8;
    s float8;
    zz float8;
    limit_z float8;
    i int;
    b int;
BEGIN
    FOR i IN 1..n LOOP
        IF dropped[i] IS NULL THEN
            RAISE EXCEPTION 'dropped must not hold NULL';
        END IF;
        IF NOT dropped[i] THEN k := k + 1; END IF;
    END LOOP;
    IF k < 2 OR coalesce(cardinality(counts), 0) <> 5 * n THEN
        RETURN;
    END IF;
    limit_z := crit[k];
    IF limit_z IS NULL THEN
        RAISE EXCEPTION 'no critical value for % active points', k;
    END IF;
    has := array_fill(false, ARRAY[n]);
    mean := array_fill(0::float8, ARRAY[n]);
    se := array_fill(0::float8, ARRAY[n]);
    FOR i IN 1..n LOOP
        CONTINUE WHEN dropped[i];
        -- stats::ScoreMoments::from_penta: pair scores b / 4.
        trials := 0;
        FOR b IN 0..4 LOOP
            cv := counts[5 * (i - 1) + b + 1];
            IF cv IS NULL OR NOT (cv >= 0 AND cv < 'Infinity'::float8) THEN
                RAISE EXCEPTION 'counts must be non-negative numbers';
            END IF;
            trials := trials + cv;
        END LOOP;
        CONTINUE WHEN trials < min_pairs OR trials = 0;
        mu := 0;
        FOR b IN 0..4 LOOP
            mu := mu + counts[5 * (i - 1) + b + 1] * (b::float8 / 4::float8);
        END LOOP;
        mu := mu / trials;
        var := 0;
        FOR b IN 0..4 LOOP
            var := var + counts[5 * (i - 1) + b + 1]
                * ((b::float8 / 4::float8 - mu) * (b::float8 / 4::float8 - mu));
        END LOOP;
        var := var / trials;
        has[i] := true;
        mean[i] := mu;
        se[i] := sqrt(var / trials);
        -- The highest mean, the first of equals.
        IF top < 0 OR mu > mean[top] THEN top := i; END IF;
    END LOOP;
    IF top < 0 THEN
        RETURN;
    END IF;
    mb := mean[top];
    sb := se[top];
    FOR i IN 1..n LOOP
        CONTINUE WHEN NOT has[i] OR i = top;
        diff := mb - mean[i];
        s := sqrt(sb * sb + se[i] * se[i]);
        IF s > 0 THEN
            zz := diff / s;
        ELSIF diff > 0 THEN
            zz := 'Infinity';
        ELSE
            zz := 0;
        END IF;
        IF zz > limit_z THEN
            point := i - 1;
            best := top - 1;
            z := CASE WHEN zz = 'Infinity'::float8 THEN 1.7976931348623157e308::float8 ELSE zz END;
            RETURN NEXT;
        END IF;
    END LOOP;
END
$$;

-- runner::tune::spsa::Spsa::begin_with: the Iteration (as serde serializes it: k, theta, delta,
-- plus, minus, c_k, a_k) that `draws` (Spsa::draws(k) as serialized: k, delta, round_plus,
-- round_minus, c_k, a_k) start from theta. `params` is Spsa::judge_params():
-- [{"min": f, "max": f, "integer": bool}, ...]. Raises when the lists' lengths differ or
-- draws are of another k.
CREATE OR REPLACE FUNCTION fleet_spsa_begin(k bigint, theta float8[], draws jsonb, params jsonb)
RETURNS jsonb
LANGUAGE plpgsql IMMUTABLE STRICT PARALLEL SAFE AS $$
DECLARE
    n int := coalesce(cardinality(theta), 0);
    plus float8[] := '{}';
    minus float8[] := '{}';
    delta float8;
    ck float8;
    lo float8;
    hi float8;
    v float8;
    u jsonb;
    side int;
    i int;
BEGIN
    IF (draws->>'k')::bigint IS DISTINCT FROM k THEN
        RAISE EXCEPTION 'the draws are of iteration %, not %', draws->>'k', k;
    END IF;
    IF jsonb_array_length(params) <> n OR jsonb_array_length(draws->'delta') <> n
        OR jsonb_array_length(draws->'c_k') <> n OR jsonb_array_length(draws->'a_k') <> n
        OR jsonb_array_length(draws->'round_plus') <> n
        OR jsonb_array_length(draws->'round_minus') <> n
    THEN
        RAISE EXCEPTION 'theta, params and draws must have one entry per parameter';
    END IF;
    FOR side IN 1..2 LOOP
        FOR i IN 1..n LOOP
            delta := (draws->'delta'->>(i - 1))::float8;
            ck := (draws->'c_k'->>(i - 1))::float8;
            lo := (params->(i - 1)->>'min')::float8;
            hi := (params->(i - 1)->>'max')::float8;
            -- (theta + sign * c_k * delta).clamp(min, max)
            v := theta[i] + CASE WHEN side = 1 THEN 1::float8 ELSE -1::float8 END * ck * delta;
            IF v < lo THEN v := lo; END IF;
            IF v > hi THEN v := hi; END IF;
            u := draws->CASE WHEN side = 1 THEN 'round_plus' ELSE 'round_minus' END->(i - 1);
            IF u IS NOT NULL AND jsonb_typeof(u) = 'number' THEN
                -- round_with: floor(v) + 1 when u < v - floor(v)
                v := CASE WHEN u::text::float8 < v - floor(v) THEN floor(v) + 1::float8
                    ELSE floor(v) END;
            END IF;
            IF side = 1 THEN plus := plus || v; ELSE minus := minus || v; END IF;
        END LOOP;
    END LOOP;
    RETURN jsonb_build_object(
        'k', k,
        'theta', to_jsonb(theta),
        'delta', draws->'delta',
        'plus', to_jsonb(plus),
        'minus', to_jsonb(minus),
        'c_k', draws->'c_k',
        'a_k', draws->'a_k');
END
$$;

-- runner::tune::spsa::Spsa::update: theta_i + a_k / c_k * result * delta_i, clamped to
-- [min, max], with the iteration as fleet_spsa_begin (or Rust) gave it.
CREATE OR REPLACE FUNCTION fleet_spsa_update(
    theta float8[], iteration jsonb, result float8, params jsonb)
RETURNS float8[]
LANGUAGE plpgsql IMMUTABLE STRICT PARALLEL SAFE AS $$
DECLARE
    n int := coalesce(cardinality(theta), 0);
    out float8[] := theta;
    step float8;
    v float8;
    lo float8;
    hi float8;
    i int;
BEGIN
    IF jsonb_array_length(params) <> n OR jsonb_array_length(iteration->'delta') <> n
        OR jsonb_array_length(iteration->'c_k') <> n
        OR jsonb_array_length(iteration->'a_k') <> n
    THEN
        RAISE EXCEPTION 'theta, params and the iteration must have one entry per parameter';
    END IF;
    FOR i IN 1..n LOOP
        step := (iteration->'a_k'->>(i - 1))::float8 / (iteration->'c_k'->>(i - 1))::float8
            * result * (iteration->'delta'->>(i - 1))::float8;
        lo := (params->(i - 1)->>'min')::float8;
        hi := (params->(i - 1)->>'max')::float8;
        v := theta[i] + step;
        IF v < lo THEN v := lo; END IF;
        IF v > hi THEN v := hi; END IF;
        out[i] := v;
    END LOOP;
    RETURN out;
END
$$;
