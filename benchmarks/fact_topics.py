"""The fact set's vocabulary: what a memory keeps about a user, and how people ask about it.

Each ``Topic`` is one kind of short record extraction files (a preference, a fact, a decision, a
lesson, an allergy or constraint, a dated plan): the values a user may have, the phrasings the
record may take (as typed into ``cairn remember``: first person, or the third person extraction
writes), and the questions a user or an agent asks about it, written to avoid the record's own
words where a person would ("what does the user drink?" of "I prefer green tea"). ``changes``
marks a topic whose value a user may replace: the old record is superseded and only the new
one answers "now" questions. ``ASKED_ELSEWHERE`` are questions about what no user here ever
said, so the right answer is nothing, or nothing trusted.

Placeholders: ``{v}`` the value; ``{name}`` the user's first name; in questions ``{who}`` (name,
"the user" or a pronoun), ``{whose}``, ``{them}``. This module is a data table, hence its length.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Topic:
    key: str
    category: str
    values: tuple[str, ...]
    records: tuple[str, ...]
    questions: tuple[str, ...]
    changes: tuple[str, ...] = ()  # phrasings of the replacement record, if the value changes


@dataclass(frozen=True)
class SharedQuestion:
    """A question answered by any of several topics' records (``about``)."""

    about: tuple[str, ...]
    questions: tuple[str, ...]


TOPICS: tuple[Topic, ...] = (
    Topic(
        "drink",
        "preference",
        ("green tea", "black coffee", "oat milk flat whites", "rooibos", "sparkling water"),
        (
            "I prefer {v} in the morning",
            "User prefers {v} in the morning",
            "{name} starts the day with {v}",
        ),
        (
            "what does {who} drink?",
            "what should I bring {them} from the café?",
            "what's {whose} usual beverage?",
            "how does {who} like to wake up, drink-wise?",
        ),
    ),
    Topic(
        "allergy",
        "constraint",
        ("peanuts", "shellfish", "gluten", "sesame", "cow's milk"),
        ("I'm allergic to {v}", "User has a severe allergy to {v}", "{name} must never eat {v}"),
        (
            "does {who} have any food allergies?",
            "is there an ingredient that makes {them} ill?",
            "what can't {who} eat?",
        ),
    ),
    Topic(
        "diet",
        "preference",
        ("vegetarian", "vegan", "pescatarian", "halal", "low-carb"),
        ("I eat {v}", "User follows a {v} diet", "{name} only eats {v} food"),
        ("what kind of meals suit {them}?", "which dishes fit {whose} eating habits?"),
    ),
    Topic(
        "employer",
        "fact",
        (
            "Acme Robotics",
            "Globex",
            "Initech",
            "Umbrella Health",
            "Stark Logistics",
            "Wayne Freight",
        ),
        ("I work at {v}", "User works as an engineer at {v}", "{name} is employed by {v}"),
        (
            "where does {who} work now?",
            "who is {whose} current employer?",
            "which company pays {whose} salary?",
        ),
        changes=(
            "I started a new job at {v}",
            "User now works at {v}",
            "{name} moved to a new role at {v}",
        ),
    ),
    Topic(
        "city",
        "fact",
        ("Lisbon", "Berlin", "Toronto", "Nairobi", "Osaka", "Melbourne"),
        ("I live in {v}", "User is based in {v}", "{name}'s home is in {v}"),
        (
            "which city is {who} based in?",
            "where is {whose} home these days?",
            "what time zone should calls with {them} use?",
        ),
        changes=("I moved to {v} last month", "User relocated to {v}", "{name} now lives in {v}"),
    ),
    Topic(
        "pet",
        "fact",
        ("a beagle named Biscuit", "a cat called Miso", "two goldfish", "a parrot named Kiwi"),
        ("I have {v}", "User owns {v}", "{name} lives with {v}"),
        ("does {who} have any animals at home?", "what pet does {who} keep?"),
    ),
    Topic(
        "meetings",
        "preference",
        ("before 11am", "after lunch", "on Tuesday mornings", "no earlier than 10am"),
        (
            "I prefer meetings {v}",
            "User wants calls scheduled {v}",
            "{name} takes meetings only {v}",
        ),
        ("when is a good slot to book a call with {them}?", "what hours suit {them} for a sync?"),
    ),
    Topic(
        "language",
        "fact",
        ("Portuguese", "German", "Japanese", "Swahili", "Spanish"),
        ("I speak {v} fluently", "User is a native {v} speaker", "{name} grew up speaking {v}"),
        (
            "which languages does {who} know?",
            "can I write to {them} in something other than English?",
        ),
    ),
    Topic(
        "birthday",
        "fact",
        ("March 3", "July 19", "October 30", "January 12"),
        ("My birthday is {v}", "User was born on {v}", "{name}'s birthday falls on {v}"),
        ("when should I send {them} a card?", "what date does {who} turn a year older?"),
    ),
    Topic(
        "partner",
        "fact",
        ("Sam", "Jordan", "Alex", "Robin"),
        ("My partner is {v}", "User's spouse is called {v}", "{name} is married to {v}"),
        ("who is {whose} significant other?", "what's the name of {whose} husband or wife?"),
    ),
    Topic(
        "database",
        "decision",
        ("Postgres", "DynamoDB", "SQLite", "MySQL"),
        (
            "I decided to use {v} for the billing service",
            "Decision: billing stores its data in {v}",
        ),
        (
            "which storage engine did we pick for invoicing?",
            "what did {who} choose to persist payments?",
        ),
    ),
    Topic(
        "lesson",
        "lesson",
        (
            "never deploy on Fridays",
            "always pin dependency versions",
            "write the rollback before the migration",
        ),
        ("Lesson learned: {v}", "User learned the hard way to {v}"),
        (
            "what did {who} learn from the last outage?",
            "what release rule does {whose} team follow?",
        ),
    ),
    Topic(
        "trip",
        "plan",
        (
            "a trip to Japan on 14 May",
            "a conference in Madrid on 2 June",
            "a hiking week in Patagonia in September",
        ),
        ("I'm going on {v}", "User has planned {v}", "{name} is away for {v}"),
        (
            "is {who} travelling soon?",
            "when will {who} be out of office?",
            "what holiday is coming up for {them}?",
        ),
    ),
    Topic(
        "hobby",
        "preference",
        ("rock climbing", "running marathons", "playing chess", "sourdough baking", "birdwatching"),
        ("I love {v}", "User spends weekends {v}", "{name}'s favourite pastime is {v}"),
        ("what does {who} do for fun?", "what gift would suit {whose} free time?"),
    ),
    Topic(
        "music",
        "preference",
        ("jazz", "80s synth-pop", "classical piano", "hip hop"),
        ("I listen to {v} while working", "User's favourite music is {v}"),
        ("what should I play during {whose} focus time?", "what tunes does {who} enjoy?"),
    ),
    Topic(
        "seat",
        "preference",
        ("an aisle seat", "a window seat"),
        ("I always book {v} on flights", "User prefers {v} when flying"),
        (
            "what should I choose on the plane for {them}?",
            "how does {who} like to sit on an airliner?",
        ),
    ),
    Topic(
        "children",
        "fact",
        ("two daughters", "a son aged five", "twin boys"),
        ("I have {v}", "User has {v}", "{name} is a parent of {v}"),
        ("does {who} have kids?", "how many little ones are in {whose} family?"),
    ),
    Topic(
        "editor",
        "preference",
        ("Vim", "VS Code", "Emacs", "PyCharm"),
        ("I code in {v}", "User's editor of choice is {v}"),
        ("which IDE does {who} use?", "what tool does {who} write software with?"),
    ),
    Topic(
        "commute",
        "fact",
        (
            "cycles to work",
            "takes the train to the office",
            "drives a hybrid to work",
            "walks to the office",
        ),
        ("User {v}", "{name} {v} every day"),
        ("how does {who} get to the office?", "does {who} need a parking spot?"),
    ),
    Topic(
        "budget",
        "constraint",
        ("under 200 euros a night", "below 90 dollars a night", "at most 150 pounds a night"),
        ("Keep my hotels {v}", "User's hotel budget is {v}"),
        (
            "how much can I spend on {whose} lodging?",
            "what's the price limit for where {who} stays?",
        ),
    ),
    Topic(
        "contact",
        "preference",
        (
            "short bullet-point emails",
            "a phone call rather than email",
            "Slack messages, never email",
        ),
        ("I prefer {v}", "User wants {v}"),
        ("how should I reach out to {them}?", "what's the best way to get in touch with {them}?"),
    ),
    Topic(
        "appointment",
        "plan",
        (
            "a dentist appointment on 3 March",
            "a physiotherapy session on Thursday at 9",
            "an eye exam on 21 April",
        ),
        ("I booked {v}", "User has {v}"),
        (
            "does {who} have any medical visits scheduled?",
            "is there a health check on {whose} calendar?",
        ),
    ),
    Topic(
        "education",
        "fact",
        (
            "studied physics at Edinburgh",
            "has a law degree from Coimbra",
            "did a PhD in biology at Kyoto",
        ),
        ("User {v}", "{name} {v}"),
        ("what's {whose} academic background?", "where did {who} go to university?"),
    ),
    Topic(
        "car",
        "fact",
        ("a red Fiat 500", "an electric Kia", "a 2012 Volvo estate"),
        ("I drive {v}", "User owns {v}"),
        ("what vehicle does {who} have?", "what should the valet expect {them} to arrive in?"),
    ),
)

SHARED: tuple[SharedQuestion, ...] = (
    SharedQuestion(
        ("allergy", "diet"),
        (
            "anything I should avoid ordering for {them}?",
            "what should the caterer know about {them}?",
        ),
    ),
    SharedQuestion(
        ("drink", "allergy", "diet"),
        ("what should I order for {whose} breakfast meeting?",),
    ),
)

# Nobody in the set ever said anything about these.
ASKED_ELSEWHERE: tuple[str, ...] = (
    "what's {whose} favourite football team?",
    "what is {whose} blood type?",
    "which phone does {who} use?",
    "what's {whose} shoe size?",
    "does {who} play a musical instrument?",
    "what was {whose} first job?",
    "which political party does {who} vote for?",
    "how tall is {who}?",
)

USERS: tuple[tuple[str, str], ...] = (
    ("Maya", "she"),
    ("Tom", "he"),
    ("Priya", "she"),
    ("Kenji", "he"),
    ("Amara", "she"),
    ("Lukas", "he"),
    ("Sofia", "she"),
    ("Diego", "he"),
    ("Aisha", "she"),
    ("Oliver", "he"),
    ("Mei", "she"),
    ("Tariq", "he"),
)
