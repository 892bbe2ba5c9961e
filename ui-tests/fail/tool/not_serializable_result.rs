use hookchain::tool;

struct Forecast {
    degrees: i32,
}

/// Gets the forecast.
#[tool]
async fn forecast(city: String) -> Result<Forecast, std::io::Error> {
    let _ = city;
    Ok(Forecast { degrees: 21 })
}

fn main() {}
